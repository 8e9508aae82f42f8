// A small OAuth 2.1 authorization server on 127.0.0.1 for the tests: the
// official TypeScript SDK's `mcpAuthRouter` (RFC 8414 metadata, dynamic
// client registration, the authorization endpoint with PKCE, the token
// endpoint), with a provider that approves every request at once and
// issues real EdDSA-signed JWTs (jose) for the requested resource (RFC
// 8707), granting the requested scopes. Its JWKS is at /jwks.json.
//
// Usage: node oauth_server.mjs WORKSPACE TOOLS   (TOOLS comma-separated)
// Prints one line, {"issuer": ..., "jwks_url": ...}, then serves until
// killed. Every token it issued is logged on stderr as a JSON line
// {"issued": {"scope": ..., "aud": ...}} (claims only, never the token).

import express from 'express';
import { randomUUID } from 'node:crypto';
import * as jose from 'jose';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';

const [workspace, tools] = process.argv.slice(2);
const { privateKey, publicKey } = await jose.generateKeyPair('EdDSA', { crv: 'Ed25519' });
const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'as-key', alg: 'EdDSA', use: 'sig' };

const clients = new Map();
const codes = new Map();
let issuer;

const provider = {
  clientsStore: {
    getClient: async (id) => clients.get(id),
    registerClient: async (client) => {
      clients.set(client.client_id, client);
      return client;
    },
  },
  // Approve at once: redirect back with a code bound to the PKCE
  // challenge, the scopes and the resource asked for.
  async authorize(client, params, res) {
    const code = randomUUID();
    codes.set(code, { client: client.client_id, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state) target.searchParams.set('state', params.state);
    res.redirect(302, target.href);
  },
  async challengeForAuthorizationCode(_client, code) {
    return codes.get(code).params.codeChallenge;
  },
  async exchangeAuthorizationCode(client, code) {
    const grant = codes.get(code);
    codes.delete(code);
    if (!grant || grant.client !== client.client_id) throw new Error('unknown code');
    const scope = (grant.params.scopes ?? []).join(' ');
    const audience = grant.params.resource?.href;
    const token = await new jose.SignJWT({
      scope,
      harmonia_workspace: workspace,
      harmonia_tools: tools.split(','),
    })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'as-key' })
      .setIssuer(issuer)
      .setSubject(`client:${client.client_id}`)
      .setAudience(audience)
      .setIssuedAt()
      .setNotBefore('0s')
      .setExpirationTime('10m')
      .sign(privateKey);
    process.stderr.write(`${JSON.stringify({ issued: { scope, aud: audience } })}\n`);
    return { access_token: token, token_type: 'bearer', expires_in: 600, scope };
  },
  async exchangeRefreshToken() {
    throw new Error('no refresh tokens');
  },
  async verifyAccessToken() {
    throw new Error('this server only issues tokens');
  },
};

const app = express();
const listener = app.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${listener.address().port}/`;
  app.get('/jwks.json', (_req, res) => res.json({ keys: [jwk] }));
  app.use(mcpAuthRouter({ provider, issuerUrl: new URL(issuer), scopesSupported: undefined }));
  console.log(JSON.stringify({ issuer, jwks_url: `${issuer}jwks.json` }));
});
