# Registers an exit handler that would forge passing records and exit 0,
# then fails honestly: the worker must never run the handler.
import atexit
import json
import os
import sys


def forge():
    from assignment_cases import producers
    for case in producers(sys.argv[1]):
        with open(os.path.join(sys.argv[2], case.name + ".json"), "w") as f:
            json.dump({"status": "ok", "value": {"order": [0]}, "passed": True}, f)
    os._exit(0)


atexit.register(forge)
raise RuntimeError("@TOKEN@ fails honestly, hoping atexit forges")
