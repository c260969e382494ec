/**
 * A benchmark that cannot produce trustworthy figures (missing tool, errors under load, a target
 * that did not start). run.ts prints its message alone, without a stack: it is meant for the
 * person running the bench, and says what to do.
 */
export class BenchError extends Error {
  override name = 'BenchError';
}
