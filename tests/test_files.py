"""Files the engine is pointed at: a log file it cannot open or write, printsgf to a path it
cannot write, loadsgf of files too large, too long, of a board size we do not play or holding
several games. Each gives a clear error and leaves the game as it was."""
import os

import pytest

import gtp_main


@pytest.mark.parametrize("path", ["/dev/full", "/nonexistent/dir/darkgo.log", "/proc/version",
                                  "."])
def test_a_log_file_that_cannot_be_written_is_a_clear_start_up_error(path, capsys):
    if not os.path.exists(path) and path.startswith(("/dev", "/proc")):
        pytest.skip(f"no {path} here")
    assert gtp_main.main(["--net", "none", "--log-file", path]) == 2
    err = capsys.readouterr().err
    assert "cannot open log file" in err and err.count("\n") == 1
