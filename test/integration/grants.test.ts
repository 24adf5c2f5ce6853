/**
 * A6: the v2 SDK's extension-grant providers through this transport, against a real OAuth setup on
 * 127.0.0.1 (test/support/oauth-fixture.ts: the SDK's authorization server with a
 * `client_credentials` token endpoint beside it, and the SDK's MCP server behind its bearer-auth
 * middleware). The conformance suite's extension scenarios run the rest (`npm run conformance`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { baseScope, startAuthServer, startProtectedServer } from '../support/oauth-fixture.js';
import { textOf } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

const machine = { clientId: 'machine-client', clientSecret: 'machine-secret-0123456789' };

async function setup() {
  const as = await startAuthServer({ clientCredentials: machine });
  cleanups.push(() => as.close());
  const rs = await startProtectedServer(as);
  cleanups.push(() => rs.close());
  const provider = new ClientCredentialsProvider({ ...machine, scope: baseScope, expectedIssuer: as.metadata.issuer });
  return { as, rs, provider };
}

describe('A6: the extension grants', () => {
  it("A6: the SDK's ClientCredentialsProvider: the first 401 runs the client_credentials grant with the client's secret, and every call then carries its token, as over the SDK's own transport", async () => {
    const outcomes: { grants: string[]; tokenAuth: string[]; bearer: boolean[]; text: string | undefined }[] = [];
    for (const which of ['ours', 'sdk'] as const) {
      const { as, rs, provider } = await setup();
      const client = new Client({ name: 'a6', version: '1.0.0' });
      const transport =
        which === 'ours'
          ? new StreamableHTTPClientTransport(rs.url, { authProvider: provider })
          : new SdkTransport(rs.url, { authProvider: provider });
      await client.connect(transport);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'machine to machine' } });
      await client.close();
      const token = provider.tokens()?.access_token;
      outcomes.push({
        grants: as.provider.grants.map((grant) => grant.grantType),
        tokenAuth: as.tokenRequests().map((request) => request.headers.authorization?.split(' ')[0] ?? 'in the body'),
        bearer: rs
          .mcpRequests()
          .filter((request) => request.status !== 401)
          .map((request) => token !== undefined && request.headers.authorization === `Bearer ${token}`),
        text: textOf(result),
      });
    }
    const [ours, sdk] = outcomes;
    expect(ours?.grants).toEqual(['client_credentials']);
    expect(ours?.tokenAuth).toHaveLength(1);
    expect(ours?.text).toBe('machine to machine');
    expect(ours?.bearer.length).toBeGreaterThan(2);
    expect(ours?.bearer.every(Boolean)).toBe(true);
    // The same exchange as over the SDK's transport.
    expect(ours?.grants).toEqual(sdk?.grants);
    expect(ours?.tokenAuth).toEqual(sdk?.tokenAuth);
    expect(ours?.text).toEqual(sdk?.text);
  });

  it('A6: wrong client credentials: connect() fails with the authorization error, and no MCP request carries a token', async () => {
    const { rs, as } = await setup();
    const provider = new ClientCredentialsProvider({
      ...machine,
      clientSecret: 'wrong',
      scope: baseScope,
      expectedIssuer: as.metadata.issuer,
    });
    const client = new Client({ name: 'a6', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(rs.url, { authProvider: provider }))).rejects.toThrow();
    await client.close();
    expect(as.provider.grants).toEqual([]);
    expect(rs.mcpRequests().every((request) => request.headers.authorization === undefined)).toBe(true);
  });
});
