/**
 * The CAs trusted for push service TLS: the system CAs, plus `caFile` when configured
 * (CHAT_PUSH_CA_FILE: a private push gateway with an internal CA, or the tests' stand-ins with
 * their self-signed certificates). undefined: node's default, the system CAs only.
 */
import fs from 'node:fs';
import tls from 'node:tls';

export function pushCa(caFile: string | null): string[] | undefined {
  return caFile === null ? undefined : [...tls.rootCertificates, fs.readFileSync(caFile, 'utf8')];
}
