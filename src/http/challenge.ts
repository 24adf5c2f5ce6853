import type { AuthChallenge } from '../../machines/types.js';

/**
 * `WWW-Authenticate: Bearer resource_metadata="…", scope="…", error="…"` (RFC 6750, RFC 9728);
 * a DPoP-protected resource's `DPoP` challenge carries the same parameters (RFC 9449 §7.1, A5).
 */
export function parseChallenge(header: string | null): AuthChallenge | undefined {
  if (header === null || !/^\s*(?:bearer|dpop)\b/i.test(header)) return undefined;
  const challenge: AuthChallenge = {};
  for (const match of header.matchAll(/([a-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi)) {
    const key = (match[1] ?? '').toLowerCase();
    const value = (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1');
    if (key === 'resource_metadata') challenge.resourceMetadataUrl = value;
    else if (key === 'scope') challenge.scope = value;
    else if (key === 'error') challenge.error = value;
  }
  return challenge;
}
