"""An independent tus 1.0 server for the tests: tuspyserver (FastAPI) under uvicorn.

    python3 tus_server.py PORT FILES_DIR COMPLETED_LOG [--without-concatenation]

Receives uploads at http://127.0.0.1:PORT/files/ into FILES_DIR; each completed upload
appends `PATH` (the stored file) to COMPLETED_LOG. With --without-concatenation, OPTIONS
leaves `concatenation` out of Tus-Extension: a server a client must not send partial
uploads to.
"""
import sys

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

port, files_dir, completed_log = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def completed(path, metadata):
    with open(completed_log, "a") as handle:
        handle.write(path + "\n")


app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=files_dir, on_upload_complete=completed))

if "--without-concatenation" in sys.argv[4:]:
    @app.middleware("http")
    async def without_concatenation(request, call_next):
        response = await call_next(request)
        if "tus-extension" in response.headers:
            offered = response.headers["tus-extension"].split(",")
            response.headers["tus-extension"] = ",".join(name for name in offered if name.strip() != "concatenation")
        return response
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
