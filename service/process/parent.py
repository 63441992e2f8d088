"""Is the process that started us still there? (`serve --parent-pid`, `worker --parent-pid`)"""

from __future__ import annotations

import os


def parent_alive(pid: int, original_ppid: int) -> bool:
    """False once process `pid` has exited; `original_ppid` is our parent's pid when we started."""
    if pid == original_ppid and os.getppid() != pid:
        return False  # our parent died and we were re-parented (a SIGKILLed parent may linger as a zombie)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True
