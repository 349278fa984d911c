"""Forwarding one request, bytes unchanged, from a proxy's handler to a store on this
machine, and relaying its answer: what the test proxies in front of moto share."""
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
