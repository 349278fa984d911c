"""What the test proxies in front of moto share: answering with S3's XML error, and
forwarding one request, bytes unchanged, to the store on this machine, relaying its answer."""
import http.client


def forward(handler, body, upstream_port, before_answer=None):
    """Sends `handler`'s request (its method, path and headers, with `body`) to
    127.0.0.1:`upstream_port` and relays the answer: its status, its headers (its own
    Content-Length) and its body (none to a HEAD). Calls `before_answer(status)` before the
    answer is sent, so that a line said about it comes before the client has it. Returns
    the status."""
    upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=120)
    upstream.request(handler.command, handler.path, body=body, headers={k: v for k, v in handler.headers.items()})
    answer = upstream.getresponse()
    data = answer.read()
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
