// The host page of scripts/browser: an MCP Apps host built on the official npm packages.
// An MCP client (@modelcontextprotocol/client) that declares the io.modelcontextprotocol/ui
// extension connects to the tern server through the same-origin /mcp proxy (serve.mjs),
// finds the app_greet tool's ui:// resource, reads it and renders it in a sandboxed iframe,
// and an AppBridge (@modelcontextprotocol/ext-apps/app-bridge) speaks the host side of the
// postMessage protocol with it, forwarding the app's tools/call to the server.
// scripts/browser bundles this file with esbuild (the packages have bare imports).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const TOOL = "app_greet";
const TOOL_INPUT = { name: "browser" };
const HOST_INFO = { name: "tern-browser-host", version: "1.0.0" };

const statusBox = document.getElementById("status");
function status(line) {
  statusBox.textContent += line + "\n";
  console.log("[host] " + line);
}
function setState(state) {
  document.body.dataset.state = state;
}

// ?era=2026-07-28 (default): the client negotiates (server/discover) and must land on
// 2026-07-28, stateless. ?era=2025-11-25: the client's default legacy initialize
// handshake, which tern answers with a session.
const era = new URLSearchParams(location.search).get("era") || "2026-07-28";
const versionNegotiation = {
  "2026-07-28": { mode: "auto" },
  "2025-11-25": { mode: "legacy" },
}[era];

// The spec's CSP for an app resource (section "Content Security Policy"): the
// restrictive default, widened only by the domains the resource declares.
function cspFor(csp) {
  const ok = (list) => (Array.isArray(list) ? list : []).filter((d) => /^[^\s;,']+$/.test(d));
  const resources = ok(csp?.resourceDomains).join(" ");
  const connect = ok(csp?.connectDomains);
  const frames = ok(csp?.frameDomains);
  const bases = ok(csp?.baseUriDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    connect.length ? `connect-src 'self' ${connect.join(" ")}` : "connect-src 'none'",
    frames.length ? `frame-src ${frames.join(" ")}` : "frame-src 'none'",
    bases.length ? `base-uri ${bases.join(" ")}` : "base-uri 'self'",
  ]
    .map((d) => d.trim())
    .join("; ");
}

function withCsp(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, "&quot;")}">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return meta + html;
}

function decodeContent(content) {
  if (typeof content.text === "string") return content.text;
  if (typeof content.blob === "string") {
    const bytes = Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
  }
  throw new Error(`resource ${content.uri} has neither text nor blob`);
}

async function main() {
  if (!versionNegotiation) throw new Error(`unknown era ${era}`);
  setState("connecting");
  const client = new Client(HOST_INFO, {
    capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    versionNegotiation,
  });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", location.href));
  await client.connect(transport);
  const negotiated = client.getNegotiatedProtocolVersion();
  document.body.dataset.protocolVersion = negotiated ?? "";
  const server = client.getServerVersion();
  status(
    `connected: era ${era}, protocol ${negotiated}, server ${server?.name} ${server?.version}` +
      (transport.sessionId ? `, session ${transport.sessionId}` : ", no session"),
  );

  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === TOOL);
  if (!tool) throw new Error(`tools/list has no ${TOOL} (${tools.length} tools)`);
  const uri = tool._meta?.ui?.resourceUri ?? tool._meta?.["ui/resourceUri"];
  if (typeof uri !== "string" || !uri.startsWith("ui://")) {
    throw new Error(`${TOOL} has no ui:// resourceUri in _meta: ${JSON.stringify(tool._meta)}`);
  }
  const visibility = tool._meta?.ui?.visibility ?? ["model", "app"];
  status(`${TOOL}: resourceUri ${uri}, visibility ${visibility.join(",")}`);

  const read = await client.readResource({ uri });
  const content = read.contents.find((c) => c.uri === uri) ?? read.contents[0];
  if (!content) throw new Error(`resources/read ${uri} returned no contents`);
  if (content.mimeType !== RESOURCE_MIME_TYPE) {
    throw new Error(`resource ${uri} has mimeType ${content.mimeType}, not ${RESOURCE_MIME_TYPE}`);
  }
  const uiMeta = content._meta?.ui ?? {};
  const policy = cspFor(uiMeta.csp);
  const html = withCsp(decodeContent(content), policy);
  status(`read ${uri}: ${html.length} chars of ${content.mimeType}; CSP: ${policy}`);

  // The iframe goes in first, without content, so that the bridge listens to its window
  // before the app's script can post ui/initialize; srcdoc is set after connect().
  const iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.title = "MCP App";
  iframe.setAttribute("sandbox", "allow-scripts");
  document.getElementById("app-container").appendChild(iframe);

  const bridge = new AppBridge(
    client,
    HOST_INFO,
    { serverTools: {}, serverResources: {}, logging: {} },
    {
      hostContext: {
        toolInfo: { tool },
        theme: "light",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        platform: "web",
        locale: navigator.language,
        userAgent: navigator.userAgent,
      },
    },
  );
  bridge.onsizechange = ({ height }) => {
    if (typeof height === "number" && height > 0) iframe.style.height = `${Math.ceil(height)}px`;
  };
  bridge.oninitialized = async () => {
    const app = bridge.getAppVersion();
    status(`app initialized: ${app?.name} ${app?.version}; sending tool input ${JSON.stringify(TOOL_INPUT)}`);
    setState("app-initialized");
    try {
      await bridge.sendToolInput({ arguments: TOOL_INPUT });
      // What a chat host does next: the model's call of the tool completes, and its result
      // goes to the app. The app's own call (its button) goes through the bridge instead.
      const result = await client.callTool({ name: TOOL, arguments: TOOL_INPUT });
      status(`host's own ${TOOL}: ${result.content.map((c) => c.text ?? `[${c.type}]`).join(" ")}`);
      await bridge.sendToolResult(result);
      status("tool result sent to the app");
      setState("ready");
    } catch (e) {
      fail(e);
    }
  };
  bridge.onerror = (e) => status(`bridge error: ${e?.message ?? e}`);
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  status("bridge connected; loading the app");
  iframe.srcdoc = html;
}

function fail(e) {
  status(`ERROR: ${e?.stack ?? e?.message ?? e}`);
  setState("error");
}

main().catch(fail);
