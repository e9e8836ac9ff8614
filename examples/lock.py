#!/usr/bin/env python3
"""Take a lock from the redlock-console lock service, extend it, release it (standard library only).

    BASE=http://localhost:3000 KEY=<an API key from REDLOCK_API_KEYS> python3 examples/lock.py

A 409 means someone else holds the lock (after waitMs), a 503 that no quorum of masters answered;
every error body is {"error": {"code", "message", "details"}}.
"""
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

BASE = os.environ.get("BASE", "http://localhost:3000")
KEY = os.environ["KEY"]


def post(path, body):
    request = urllib.request.Request(
        BASE + path,
        data=json.dumps(body).encode(),
        headers={"authorization": "Bearer " + KEY, "content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        problem = json.load(error)["error"]
        sys.exit(f"{path}: {error.code} {problem['code']}: {problem['message']}")


resource = "invoice-42"
path = "/api/locks/" + urllib.parse.quote(resource, safe="")
lock = post("/api/locks", {"resource": resource, "ttlMs": 10_000, "waitMs": 2_000})
print("granted, fence", lock["fence"])  # pass the fence to the storage you protect: it refuses smaller ones
try:
    extended = post(path + "/extend", {"token": lock["token"], "ttlMs": 10_000})
    print("extended, valid for", extended["validityMs"], "ms")
finally:
    released = post(path + "/release", {"token": lock["token"]})
    print("released" if released["released"] else "not released (it had expired)")
