/**
 * N2: certificates made for a test with the `openssl` command (Node has no certificate
 * generator): self-signed, for two days, EC P-256 keys, in a temporary directory removed at once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  /** The certificate, PEM. */
  cert: string;
  /** Its private key, PEM. */
  key: string;
}

/** A self-signed certificate for `name` (its subject and only subject alternative name, a DNS name). */
export function selfSigned(name: string): KeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-xstate-certs-'));
  try {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=DNS:${name}`,
      ],
      { stdio: 'ignore', timeout: 10_000 },
    );
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
