"""gunicorn settings for the webhook tier. Workers only verify, dedupe and enqueue, so a few sync
workers with threads answer GitHub in milliseconds; triage runs in the separate worker service."""
import os

wsgi_app = "triagebot.service.wiring:wsgi()"
bind = os.environ.get("TRIAGEBOT_BIND", "0.0.0.0:8080")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = 30  # far above the receiver's work; GitHub gives up after 10 s anyway
graceful_timeout = 20
keepalive = 5
accesslog = "-"
errorlog = "-"
# access log without query strings or headers (signatures, tokens)
access_log_format = '{"remote":"%(h)s","request":"%(m)s %(U)s","status":%(s)s,"ms":%(M)s}'
limit_request_line = 4094
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
