"""The load benchmark runs end to end and its lost-case check is real."""
import pytest

from grader.bench import server as bench_server

pytestmark = [pytest.mark.server, pytest.mark.slow]
# The asyncio load generator always; `make bench` uses wrk when it is installed.
def test_bench_reports_rate_latency_errors_and_lost(capsys):
    assert bench_server.main(["--seconds", "2", "--clients", "8", "--tool", "python"]) == 0
    out = capsys.readouterr().out
    assert "errors: 0\n" in out and "lost: 0 (" in out
    rate = float(out.split("requests/s: ")[1].split()[0])
    assert rate > 50  # a working server answers far more; 0 would mean nothing was graded


def test_lost_cases_are_counted():
    result = bench_server.LoadResult("x", 3, 1.0, 0, 1.0, 2.0, frozenset({(1, 0), (1, 1), (1, 2)}), 3)
    assert bench_server._report(result, {(1, 0), (1, 2)}, type("A", (), {"clients": 1, "seconds": 1})(),
                                "n/a") == 1


def test_main_without_arguments_ignores_the_callers_command_line(monkeypatch):
    # `make bench` calls main() from `grader bench`, whose sys.argv is not ours.
    monkeypatch.setattr("sys.argv", ["grader", "bench", "--unrelated"])
    assert bench_server._parse([]).seconds == 10.0
    with pytest.raises(SystemExit):
        bench_server._parse(["--unrelated"])
