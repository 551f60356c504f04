// oidc-provider as the authorization server of tern's end-to-end OAuth test:
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
import http from 'node:http';
import Provider from 'oidc-provider';

const resource = process.argv[2];
const opaqueResource = process.argv[3];
const ACCESS_TTL = Number(process.env.ACCESS_TTL ?? 3);
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
    }],
    scopes: ['openid', 'offline_access', 'files:read', 'files:write'],
    pkce: { required: () => true },
    cookies: { keys: ['tern-oidc-test-cookie-key'] },
    features: {
      registration: { enabled: true },
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource && indicator !== opaqueResource) {
            throw new Error(`unknown resource ${indicator}`);
          }
          return {
            scope: 'files:read files:write',
            audience: indicator,
            accessTokenTTL: ACCESS_TTL,
            accessTokenFormat: indicator === resource ? 'jwt' : 'opaque',
          };
        },
      },
    },
    ttl: { AccessToken: ACCESS_TTL },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  provider.on('server_error', (_ctx, err) => console.error('server_error', err));
  handler = provider.callback();
  console.log(`listening on ${issuer}`);
});
