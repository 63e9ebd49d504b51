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


class EpisodeMetrics:
    """One episode's imitation and style metrics of an agent's env (those it reports), summed
    after every decision's reward; also app/evaluate.py's per-episode figures."""

    def __init__(self, env, agent_id):
        self.env, self.id = env, agent_id
        self.tracked = env.calc_tracking_error(agent_id) is not None
        self.styled = env.calc_style_error(agent_id) is not None
        self.reset()

    def reset(self):
        self.tracking, self.style = EpisodeTracking(), EpisodeStyle()

    def add_decision(self):
        """The metrics now (after a decision's reward) into the episode's sums; the tracking errors
        added ({name: error}, None when not reported)."""
        tracking = self.env.calc_tracking_error(self.id) if self.tracked else None
        if tracking is not None:
            self.tracking.add(tracking)
        if self.styled:
            self.style.add(self.env.calc_style_error(self.id))
        return tracking

    def means(self):
        """({tracking error: episode mean}, {style metric: episode mean}), empty where not reported."""
        return (self.tracking.means() if self.tracked else {}), (self.style.means() if self.styled else {})


class TestMetrics:
    __test__ = False    # not a pytest class

    def __init__(self, env, agent_id):
        self.episode = EpisodeMetrics(env, agent_id)
        self.tracked, self.styled = self.episode.tracked, self.episode.styled
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
        self.episode.reset()

    def add_decision(self):
        self.episode.add_decision()

    def end_episode(self, fell):
        """The finished episode's means, fall and success into the phase's sums."""
        tracking, style = self.episode.means()
        row, success = [], False
        if self.tracked:
            row += [tracking[name] for name in TRACKING_ERRORS]
            success = is_success(fell, tracking["body_pos_err"])
        if self.styled:
            row += [style[name] for name in STYLE_ERRORS] + [np.sin(style["heading"]), np.cos(style["heading"])]
        self._sums += row + [float(fell), float(success)]
        self.episode.reset()

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
