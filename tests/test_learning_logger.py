"""util.logger: fixed-width rows every dump, fixed columns, append on resume; util.mpi_util alone."""
import numpy as np
import pytest

import util.mpi_util as mpi_util
from util.logger import MIN_COLUMN_WIDTH, Logger


def test_rows_columns_and_append(tmp_path):
    path = tmp_path / "log" / "agent0_log.txt"
    log = Logger()
    log.configure_output_file(str(path))
    for it in range(2):
        log.log_tabular("Iteration", it)
        log.log_tabular("Samples", np.int64(123456789))
        log.log_tabular("Adv_Mean", -1.2345678e-100)
        log.dump_tabular()
    lines = path.read_text().splitlines()
    assert lines[0].split() == ["Iteration", "Samples", "Adv_Mean"]
    assert lines[2].split() == ["1", "123456789", "-1.2345678e-100"]
    assert len({len(line) for line in lines}) == 1 and len(lines[0]) == 3 * MIN_COLUMN_WIDTH + 2
    assert log.last_row["Iteration"] == 1
    log.log_tabular("Iteration", 2)
    with pytest.raises(KeyError, match="logged twice"):
        log.log_tabular("Iteration", 3)
    with pytest.raises(KeyError, match="'Other' was not in the first row"):
        log.log_tabular("Other", 1)
    with pytest.raises(KeyError, match="lacks column"):
        log.dump_tabular()

    resumed = Logger()
    resumed.configure_output_file(str(path), append=True)
    for key, val in (("Iteration", 2), ("Samples", 5), ("Adv_Mean", 0.5)):
        resumed.log_tabular(key, val)
    resumed.dump_tabular()
    assert [line.split()[0] for line in path.read_text().splitlines()] == ["Iteration", "0", "1", "2"]


def test_resumed_run_with_new_columns_widens_the_log(tmp_path):
    """A run begun without a column (an older version) and resumed with it: the log is rewritten
    with the full header, the old rows hold nan there, and numpy reads it as one table."""
    path = tmp_path / "agent0_log.txt"
    old = Logger()
    old.configure_output_file(str(path))
    for it in range(2):
        old.log_tabular("Iteration", it)
        old.log_tabular("Test_Return", 1.5 + it)
        old.dump_tabular()
    new = Logger()
    new.configure_output_file(str(path), append=True)
    new.log_tabular("Iteration", 2)
    new.log_tabular("Test_Return", 4.0)
    new.log_tabular("Test_Body_Pos_Err", 0.07)
    new.dump_tabular()
    table = np.genfromtxt(path, names=True)
    assert table.dtype.names == ("Iteration", "Test_Return", "Test_Body_Pos_Err")
    assert table["Iteration"].tolist() == [0, 1, 2] and table["Test_Return"].tolist() == [1.5, 2.5, 4.0]
    assert np.isnan(table["Test_Body_Pos_Err"][:2]).all() and table["Test_Body_Pos_Err"][2] == 0.07
    assert len({len(line) for line in path.read_text().splitlines()}) == 1
    fewer = Logger()
    fewer.configure_output_file(str(path), append=True)
    fewer.log_tabular("Iteration", 3)
    with pytest.raises(ValueError, match="column\\(s\\) Test_Return, Test_Body_Pos_Err that this run does not log"):
        fewer.dump_tabular()


def test_single_process_mpi_helpers():
    assert (mpi_util.rank(), mpi_util.size(), mpi_util.is_root()) == (0, 1, True)
    assert mpi_util.reduce_sum(3) == 3.0 and mpi_util.reduce_mean(4.0) == 4.0
    x = np.arange(3.0)
    y = mpi_util.allreduce_sum(x)
    assert np.array_equal(y, x) and y is not x
    assert np.array_equal(mpi_util.reduce_max(np.array([1.0, 5.0])), [1.0, 5.0])
    assert mpi_util.reduce_dict_mean({"a": 1, "b": 2.5}) == {"a": 1.0, "b": 2.5}
    assert np.array_equal(mpi_util.bcast(x), x) and mpi_util.gather(7) == [7]
