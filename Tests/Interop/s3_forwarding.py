"""What the test proxies in front of moto share: a request handler that says one line per
answer, answering with S3's XML error, forwarding one request, bytes unchanged, to the
store on this machine and relaying its answer, and the server they run."""
import http.client
import http.server
import ssl
import time
import sys
import threading

_said = threading.Lock()


def say_line(text):
    """Writes `text` and a newline to standard output in one write, flushed. `print` from
    many threads at once can write one line's text and another's newline between, and two
    lines then read as one."""
    with _said:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def forward(handler, body, upstream_port, before_answer=None, rewrite=None):
    """Sends `handler`'s request (its method, path and headers, with `body`) to
    127.0.0.1:`upstream_port` and relays the answer: its status, its headers (its own
    Content-Length) and its body (none to a HEAD), or what `rewrite(status, body)` makes of
    the body. Calls `before_answer(status)` before the answer is sent, so that a line said
    about it comes before the client has it. Returns the status."""
    upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=120)
    upstream.request(handler.command, handler.path, body=body, headers={k: v for k, v in handler.headers.items()})
    answer = upstream.getresponse()
    data = answer.read()
    if rewrite:
        data = rewrite(answer.status, data)
    handler.send_response(answer.status)
    for name, value in answer.getheaders():
        if name.lower() not in ("content-length", "transfer-encoding", "connection"):
            handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data)))
    if before_answer:
        before_answer(answer.status)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)
    upstream.close()
    return answer.status


def error_body(code, message="injected by the test"):
    """S3's XML error with `code` and `message`."""
    return (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>"
            f"<Message>{message}</Message></Error>").encode()


def answer_error(handler, status, body, headers=(), before_answer=None):
    """Answers `status` with `body` (S3's XML error; none to a HEAD) and `headers`, calling
    `before_answer(status)` before the answer is sent."""
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Type", "application/xml")
    handler.send_header("Content-Length", str(len(body)))
    if before_answer:
        before_answer(status)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    """A proxy's handler: every method goes to `handle_any`, which a proxy defines; `say`
    writes one line per answer on standard output, `METHOD PATH?QUERY -> STATUS`, after
    the time (`time.time()`, to the millisecond) when `timed`."""
    protocol_version = "HTTP/1.1"
    timed = False

    def log_message(self, *args):
        pass

    def say(self, status):
        line = f"{self.command} {self.path} -> {status}"
        say_line(f"{time.time():.3f} {line}" if self.timed else line)

    def read_body(self):
        """The request's body, read whole (its Content-Length)."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def refuse(self, status, body, headers=()):
        """Answers `status` with `body` (S3's XML error), saying it before it is sent: the
        client may stop the proxy as soon as it has it."""
        answer_error(self, status, body, headers, before_answer=self.say)

    def do_GET(self):
        self.handle_any()

    do_PUT = do_POST = do_DELETE = do_HEAD = do_GET


def serve(port, handler, tls=None):
    """Serves `handler` on 127.0.0.1:`port`, a thread per connection, for ever; over TLS
    when `tls` is `(CERTIFICATE_PEM, KEY_PEM)`. Many clients connect at once (a test sends
    dozens of requests together): the listen backlog is 128, since one of 5 would refuse
    some connections, which the client would count as failures."""
    http.server.ThreadingHTTPServer.daemon_threads = True
    http.server.ThreadingHTTPServer.request_queue_size = 128
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        # The handshake in each connection's thread, not in accept(): a client that
        # connects and says nothing holds up no other.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    server.serve_forever()
