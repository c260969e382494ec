/** Types of uws-header-limit.mjs (imported by src/http/header-limit.ts and the tests). */
export declare const ORIGINAL_LIMIT: 4096;
export declare const PATCHED_LIMIT: 32768;
export declare function binaryPath(): string;
export declare function headerSectionLimit(file?: string): number | null;
export declare function headerSectionLimitAtSites(file?: string): number | null;
export declare function patch(file?: string): 'patched' | 'already' | 'unknown';
/** Known binaries by file name: published SHA-256 and the offsets of the patched immediates. */
export declare const KNOWN_BUILDS: Readonly<Record<string, { sha256: string; sites: ReadonlyArray<{ opcode: string; immediate: number }> }>>;
