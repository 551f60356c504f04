// oidc-provider as the authorization server of tern's end-to-end OAuth tests:
//   node provider.mjs RESOURCE [OPAQUE_RESOURCE]
// Binds 127.0.0.1 on a free port, prints `listening on ISSUER`, and serves until killed.
// Configured as MCP asks of an authorization server: PKCE (S256) required, dynamic
// client registration, resource indicators (RFC 8707) with JWT access tokens whose
// audience is the resource, refresh tokens for offline_access, the RFC 9207 iss
// parameter. Access tokens live ACCESS_TTL seconds, so the test can watch one expire.
// OPAQUE_RESOURCE gets opaque access tokens instead, which its server checks at the
// introspection endpoint (RFC 7662) as the confidential client notes-server. The
// built-in development interactions stand in for the login and consent pages: the test
// fills them in over HTTP.
// Machine authorization: the client credentials grant for two static clients, allowed
// the scopes files:read and files:write: machine-basic (client_secret_basic, secret
// machine-basic-secret) and machine-jwt (private_key_jwt, ES256, with the public half
// of machine-key.pem, read from beside this file; the assertion's aud may be the issuer
// or the token endpoint). DPoP (RFC 9449) is on for every grant: a proof binds the
// access token (cnf.jkt, token_type DPoP) and, for public clients, the refresh token to
// its key. With DPOP_NONCE=1 every proof must carry a server nonce (use_dpop_nonce and a
// DPoP-Nonce header until it does).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import Provider from 'oidc-provider';

const resource = process.argv[2];
const opaqueResource = process.argv[3];
const ACCESS_TTL = Number(process.env.ACCESS_TTL ?? 3);
const DPOP_NONCE = process.env.DPOP_NONCE === '1';
const machineKeyFile = new URL('machine-key.pem', import.meta.url);
if (!fs.existsSync(machineKeyFile)) {
  throw new Error(`${machineKeyFile.pathname} is missing: copy tests/oidc/machine-key.pem beside provider.mjs`);
}
const { kty, crv, x, y } = crypto.createPublicKey(fs.readFileSync(machineKeyFile)).export({ format: 'jwk' });
const fileScopes = 'files:read files:write';
let handler = (_req, res) => { res.statusCode = 503; res.end(); };
const server = http.createServer((req, res) => handler(req, res));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'notes-server',
      client_secret: 'notes-server-secret',
      grant_types: [],
      redirect_uris: [],
      response_types: [],
    }, {
      client_id: 'machine-basic',
      client_secret: 'machine-basic-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: fileScopes,
      token_endpoint_auth_method: 'client_secret_basic',
    }, {
      client_id: 'machine-jwt',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: fileScopes,
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: { keys: [{ kty, crv, x, y, use: 'sig', alg: 'ES256' }] },
    }],
    scopes: ['openid', 'offline_access', 'files:read', 'files:write'],
    pkce: { required: () => true },
    cookies: { keys: ['tern-oidc-test-cookie-key'] },
    features: {
      registration: { enabled: true },
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      clientCredentials: { enabled: true },
      dPoP: {
        enabled: true,
        ...(DPOP_NONCE ? { nonceSecret: crypto.randomBytes(32), requireNonce: () => true } : {}),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource && indicator !== opaqueResource) {
            throw new Error(`unknown resource ${indicator}`);
          }
          return {
            scope: fileScopes,
            audience: indicator,
            accessTokenTTL: ACCESS_TTL,
            accessTokenFormat: indicator === resource ? 'jwt' : 'opaque',
          };
        },
      },
    },
    ttl: { AccessToken: ACCESS_TTL, ClientCredentials: ACCESS_TTL },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  provider.on('server_error', (_ctx, err) => console.error('server_error', err));
  // The token endpoint answers invalid_grant and invalid_client with generic descriptions;
  // the reason (e.g. "failed jkt verification") goes to stderr.
  provider.on('grant.error', (_ctx, err) => console.error('grant.error', err.error, err.error_detail ?? err.error_description));
  handler = provider.callback();
  console.log(`listening on ${issuer}`);
});
