"""The test phases' metric columns of an agent's log: the env's imitation metrics
(Env.calc_tracking_error, env/tracking_error.py) and style metrics (Env.calc_style_error,
env/style_error.py), whichever its scene reports, read after every reward of a test episode.

Columns, in this order, those of the metrics the env reports at construction:
  Test_Root_Pos_Err, ..., Test_Root_Ang_Vel_Err   tracking: the mean over the phase's episodes of
                                                   each episode's mean per decision
  Test_Style_Err, Test_Root_Speed, Test_Heading    style: the same means; Test_Heading the circular
                                                   mean of the episodes' circular mean headings
  Test_Fall_Rate                                   (either) the fraction of episodes ending in a fall
  Test_Success_Rate                                (tracking) no fall and a mean body_pos_err within
                                                   the success bound (tracking_error.is_success)
Episodes of every MPI rank count (one allreduce at the phase's end).
"""
import numpy as np

import util.mpi_util as mpi_util
from env.style_error import STYLE_ERRORS, STYLE_METRICS, EpisodeStyle
from env.tracking_error import TRACKING_ERRORS, EpisodeTracking, is_success

TRACKING_COLUMNS = tuple("Test_" + name.title() for name in TRACKING_ERRORS)
STYLE_COLUMNS = tuple("Test_" + name.title() for name in STYLE_METRICS)
FALL_COLUMN, SUCCESS_COLUMN = "Test_Fall_Rate", "Test_Success_Rate"


class TestMetrics:
    __test__ = False    # not a pytest class

    def __init__(self, env, agent_id):
        self.env, self.id = env, agent_id
        self.tracked = env.calc_tracking_error(agent_id) is not None
        self.styled = env.calc_style_error(agent_id) is not None
        self.columns = ((TRACKING_COLUMNS if self.tracked else ()) + (STYLE_COLUMNS if self.styled else ())
                        + ((FALL_COLUMN,) if self.tracked or self.styled else ())
                        + ((SUCCESS_COLUMN,) if self.tracked else ()))
        self.averages = dict.fromkeys(self.columns, 0.0)     # of the last finished phase
        self.start_phase()

    @property
    def enabled(self):
        return bool(self.columns)

    def start_phase(self):
        # per episode of the phase, summed: tracking errors, style errors, sin and cos of the
        # heading, fall, success (the parts this env reports)
        self._sums = np.zeros((len(TRACKING_ERRORS) if self.tracked else 0)
                              + (len(STYLE_ERRORS) + 2 if self.styled else 0) + 2)
        self._start_episode()

    def _start_episode(self):
        self._tracking, self._style = EpisodeTracking(), EpisodeStyle()

    def add_decision(self):
        """The metrics now (after a decision's reward) into the episode's sums."""
        if self.tracked:
            self._tracking.add(self.env.calc_tracking_error(self.id))
        if self.styled:
            self._style.add(self.env.calc_style_error(self.id))

    def end_episode(self, fell):
        """The finished episode's means, fall and success into the phase's sums."""
        row, success = [], False
        if self.tracked:
            means = self._tracking.means()
            row += [means[name] for name in TRACKING_ERRORS]
            success = is_success(fell, means["body_pos_err"])
        if self.styled:
            means = self._style.means()
            row += [means[name] for name in STYLE_ERRORS] + [np.sin(means["heading"]), np.cos(means["heading"])]
        self._sums += row + [float(fell), float(success)]
        self._start_episode()

    def end_phase(self, global_count):
        """Collective: the phase's averages over every rank's episodes (global_count of them)."""
        sums = mpi_util.allreduce_sum(self._sums) / global_count
        values, k = [], 0
        if self.tracked:
            values += sums[k:k + len(TRACKING_ERRORS)].tolist()
            k += len(TRACKING_ERRORS)
        if self.styled:
            n = len(STYLE_ERRORS)
            values += sums[k:k + n].tolist() + [float(np.arctan2(sums[k + n], sums[k + n + 1]))]
            k += n + 2
        values.append(float(sums[k]))
        if self.tracked:
            values.append(float(sums[k + 1]))
        self.averages = dict(zip(self.columns, values, strict=True))
