"""Prints the launcher-provided environment as JSON to a file named after the role; optionally fails."""

import json
import os
import sys
import time

keys = ["PADDLE_TRAINER_ID", "PADDLE_CURRENT_ENDPOINT", "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ENDPOINTS",
        "FLAGS_selected_gpus", "PADDLE_PSERVERS_IP_PORT_LIST", "PADDLE_PORT", "POD_IP", "TRAINING_ROLE",
        "PADDLE_PSERVER_ID", "PADDLE_COMPAT_JOB_TOKEN", "PADDLE_COMPAT_JOB_TOKEN_FILE"]
out_dir, mode = sys.argv[1], sys.argv[2]
role = os.environ.get("TRAINING_ROLE", "TRAINER")
idx = os.environ.get("PADDLE_PSERVER_ID") if role == "PSERVER" else os.environ.get("PADDLE_TRAINER_ID")
with open(os.path.join(out_dir, "%s_%s.json" % (role, idx)), "w") as f:
    row = {k: os.environ.get(k) for k in keys}
    key_file = os.environ.get("PADDLE_COMPAT_JOB_TOKEN_FILE")
    row["key_file_mode"] = oct(os.stat(key_file).st_mode & 0o777) if key_file else None
    json.dump(row, f)
print("hello from", role, idx, flush=True)
if mode == "fail_trainer_1" and role == "TRAINER" and idx == "1":
    time.sleep(0.5)
    sys.exit(3)
if mode == "hang" or (mode == "fail_trainer_1"):
    time.sleep(120)   # must be stopped by the launcher
if mode == "server_waits" and role == "PSERVER":
    time.sleep(120)   # servers that never leave are stopped after the grace period
