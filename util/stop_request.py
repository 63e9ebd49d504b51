"""Stopping a training run cleanly on a signal: after the current iteration, with a final
checkpoint and resume state, on every rank at the same iteration.

Signals: SIGINT (Ctrl-C) and SIGTERM to a single-process run; SIGUSR1, which mpi_run.py sends to
mpiexec (which forwards it to every rank) when mpi_run itself gets SIGINT or SIGTERM (mpiexec and
the ranks run in their own session, so a terminal's Ctrl-C reaches mpi_run only). A handler only
records the signal; the training loop asks `agreed()` after each iteration, a collective that
tells every rank whether any rank was signalled, so all of them stop after the same iteration.
A second SIGINT in the same process stops at once (KeyboardInterrupt).

Exit status: 128 + the signal's number (130 SIGINT, 143 SIGTERM); a rank stopped by SIGUSR1
exits 0 and mpi_run.py reports its own signal's status.
"""
import signal

import util.mpi_util as mpi_util

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)


def exit_status(signum):
    return 0 if signum == signal.SIGUSR1 else 128 + signum


class StopRequest:
    def __init__(self):
        self.signum = 0

    def install(self):
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handle)

    def _handle(self, signum, frame):
        if self.signum and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if not self.signum:
            self.signum = signum
            print(f"rank {mpi_util.rank()}: {signal.Signals(signum).name}: stopping after the current iteration "
                  "(final checkpoint and resume state are written)", flush=True)

    def agreed(self):
        """Collective (every rank, once per iteration): the largest signal number any rank
        recorded, 0 when none did."""
        return int(mpi_util.reduce_max(float(self.signum)))
