// oidc-provider as the authorization server of tern's end-to-end OAuth test:
//   node provider.mjs RESOURCE
// Binds 127.0.0.1 on a free port, prints `listening on ISSUER`, and serves until killed.
// Configured as MCP asks of an authorization server: PKCE (S256) required, dynamic
// client registration, resource indicators (RFC 8707) with JWT access tokens whose
// audience is the resource, refresh tokens for offline_access, the RFC 9207 iss
// parameter. Access tokens live ACCESS_TTL seconds, so the test can watch one expire.
// The built-in development interactions stand in for the login and consent pages: the
// test fills them in over HTTP.
import http from 'node:http';
import Provider from 'oidc-provider';

const resource = process.argv[2];
const ACCESS_TTL = Number(process.env.ACCESS_TTL ?? 3);
let handler = (_req, res) => { res.statusCode = 503; res.end(); };
const server = http.createServer((req, res) => handler(req, res));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [],
    scopes: ['openid', 'offline_access', 'files:read', 'files:write'],
    pkce: { required: () => true },
    cookies: { keys: ['tern-oidc-test-cookie-key'] },
    features: {
      registration: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
          return {
            scope: 'files:read files:write',
            audience: resource,
            accessTokenTTL: ACCESS_TTL,
            accessTokenFormat: 'jwt',
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
