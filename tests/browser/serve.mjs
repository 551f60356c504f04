// The web server of scripts/browser: serves the host page and its bundle, and proxies /mcp
// to the MCP server under test, so that the page's MCP client talks to the same origin
// (tern refuses requests whose Origin is not its own). Node's http module only.
//
//   node serve.mjs UPSTREAM_MCP_URL BUNDLE_JS
//
// Binds 127.0.0.1 on a free port and prints `serving on http://127.0.0.1:PORT/`.
import { readFileSync } from "node:fs";
import http from "node:http";

const [upstreamArg, bundlePath] = process.argv.slice(2);
if (!upstreamArg || !bundlePath) {
  console.error("usage: node serve.mjs UPSTREAM_MCP_URL BUNDLE_JS");
  process.exit(2);
}
const upstream = new URL(upstreamArg);
const hostHtml = readFileSync(new URL("./host.html", import.meta.url));
const bundle = readFileSync(bundlePath);

// Request headers that carry protocol meaning; never Origin, Host, cookies or the
// browser's Sec-Fetch-* headers.
function forwardedRequestHeaders(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      name === "content-type" ||
      name === "content-length" ||
      name === "accept" ||
      name === "last-event-id" ||
      name === "authorization" ||
      name.startsWith("mcp-")
    ) {
      out[name] = value;
    }
  }
  return out;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
]);

function proxy(req, res) {
  const outgoing = http.request(
    {
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      path: upstream.pathname + upstream.search,
      method: req.method,
      headers: forwardedRequestHeaders(req.headers),
    },
    (answer) => {
      const headers = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (!HOP_BY_HOP.has(name)) headers[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, headers);
      res.flushHeaders(); // an SSE stream's headers go out before its first event
      answer.pipe(res); // chunk by chunk as they come: an SSE stream streams
      answer.on("error", () => res.destroy());
    },
  );
  outgoing.on("error", (e) => {
    if (!res.headersSent) {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32603, message: `proxy: upstream unreachable: ${e.message}` },
        }),
      );
    } else {
      res.destroy();
    }
  });
  // The browser hung up (e.g. the client closed its SSE stream): drop the upstream side.
  res.on("close", () => {
    if (!res.writableFinished) outgoing.destroy();
  });
  req.pipe(outgoing);
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === "/mcp") {
    if (["POST", "GET", "DELETE"].includes(req.method ?? "")) return proxy(req, res);
    res.writeHead(405, { allow: "POST, GET, DELETE" });
    return res.end();
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD" });
    return res.end();
  }
  if (path === "/" || path === "/host.html") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    return res.end(req.method === "HEAD" ? undefined : hostHtml);
  }
  if (path === "/host.bundle.js") {
    res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" });
    return res.end(req.method === "HEAD" ? undefined : bundle);
  }
  if (path === "/favicon.ico") {
    res.writeHead(204);
    return res.end();
  }
  res.writeHead(404, { "content-type": "text/plain" });
  res.end("not found\n");
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  console.log(`serving on http://127.0.0.1:${port}/`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
