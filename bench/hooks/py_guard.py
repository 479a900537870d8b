#!/usr/bin/env python3
"""A typical one-file Python PreToolUse hook, the kind teams write by hand: read the payload,
regex the command, print a deny. For comparison only (it is exactly what Forge avoids)."""
import json, re, sys

data = json.load(sys.stdin)
cmd = (data.get("tool_input") or {}).get("command", "")
for pat in (r"rm\s+-rf\s+/", r"git\s+push\s+.*--force", r"curl[^|]*\|\s*sh"):
    if re.search(pat, cmd):
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
              "permissionDecision": "deny", "permissionDecisionReason": "blocked: " + pat}}))
        break
sys.exit(0)
