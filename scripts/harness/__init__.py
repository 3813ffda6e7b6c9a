"""
One process harness for the demo, the benchmark, the soak and the end-to-end tests.

processes  start a subprocess with its output in a file, wait for its port or a log line
           (named errors on timeout), stop it with SIGTERM then SIGKILL; a group of them
mitmdump   mitmdump on a free loopback port with the addon, scripts and options
provider   the stand-in provider in a process of its own
sink       an upstream for load runs that answers without reading
load       keep-alive clients sending requests through a proxy
inprocess  the addon inside mitmproxy's test master
"""

from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import own_mitmdump
from harness.mitmdump import start_mitmdump
from harness.processes import HarnessError
from harness.processes import LogTimeout
from harness.processes import Process
from harness.processes import ProcessGroup
from harness.processes import StartupError
from harness.processes import free_port
from harness.provider import start_standin
from harness.sink import start_sink

__all__ = [
    "ADDON_SCRIPT",
    "HarnessError",
    "LogTimeout",
    "Process",
    "ProcessGroup",
    "StartupError",
    "free_port",
    "own_mitmdump",
    "start_mitmdump",
    "start_sink",
    "start_standin",
]
