"""Serving one of these test servers over Streamable HTTP on 127.0.0.1, sessions on."""

import socket

import anyio


def serve_http(server, port: int) -> None:
    """Binds (port 0: any free one) and listens before printing `listening on URL`, so
    a caller's connect can never be refused: it waits in the queue until uvicorn runs."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(1024)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    anyio.run(uvicorn.Server(config).serve, [sock])
