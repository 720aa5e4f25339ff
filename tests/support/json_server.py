"""A local JSON HTTP server on 127.0.0.1 for adapter tests (OpenAI-compatible APIs).

``json_server(respond)`` runs ``respond(path, payload, headers) -> Reply`` for every POST,
records the requests, and stops when the block ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; bytes -> sent as is
    delay_s: float = 0.0


@dataclass
class Server:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


Responder = Callable[[str, dict[str, Any], dict[str, str]], Reply]


@contextmanager
def json_server(respond: Responder) -> Iterator[Server]:
    server = Server(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            payload = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.requests.append({"path": self.path, "payload": payload, "headers": headers})
            reply = respond(self.path, payload, headers)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def chat_reply(text: str) -> Reply:
    """An OpenAI chat-completions answer carrying ``text``."""
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
    )
