"""Python imports this at the start of each process whose PYTHONPATH leads here (`harness.faults.faults_env`):
the fault-injection hooks of $HARNESS_FAULTS, in the processes a test starts."""

from harness.faults import install_from_env

install_from_env()
