"""The load benchmark runs end to end and its lost-case check is real."""

import pytest

from benchmarks import server as bench_server
from benchmarks import server_matrix as bench_server_matrix

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.exclusive]  # it measures rates


# The asyncio load generator always; `make bench` uses wrk when it is installed.
def test_bench_reports_rate_latency_errors_and_lost(capsys):
    assert bench_server.main(["--seconds", "2", "--clients", "8", "--tool", "python"]) == 0
    out = capsys.readouterr().out
    assert "errors: 0\n" in out and "lost: 0 (" in out
    rate = float(out.split("requests/s: ")[1].split()[0])
    assert rate > 50  # a working server answers far more; 0 would mean nothing was graded


def test_lost_cases_are_counted():
    result = bench_server.LoadResult("x", 3, 1.0, 0, 1.0, 2.0, frozenset({(1, 0), (1, 1), (1, 2)}), 3)
    assert bench_server._report(result, {(1, 0), (1, 2)}, type("A", (), {"clients": 1, "seconds": 1})(), "n/a") == 1


def test_main_without_arguments_ignores_the_callers_command_line(monkeypatch):
    # `make bench` calls main() from `make bench`, whose sys.argv is not ours.
    monkeypatch.setattr("sys.argv", ["grader", "bench", "--unrelated"])
    assert bench_server._parse([]).seconds == 10.0
    with pytest.raises(SystemExit):
        bench_server._parse(["--unrelated"])


def test_attacked_run_counts_the_attack_and_the_server_never_answers_5xx(capsys):
    assert bench_server.main(["--seconds", "2", "--clients", "4", "--tool", "python", "--attack"]) == 0
    out = capsys.readouterr().out
    attack = next(line for line in out.splitlines() if line.startswith("attack: "))
    counts = dict(part.rsplit(" ", 1) for part in attack[len("attack: ") :].split(", "))
    assert int(counts["login"]) > 0 and int(counts["body"]) > 0 and int(counts["held"]) > 0
    assert int(counts["bad"]) > 0 and counts["bad_5xx"] == "0"
    assert "lost: 0 (" in out


def row(label, rate, lost=0, attack=""):
    return bench_server_matrix.BenchRow(label, rate, 10.0, 50.0, 0, lost, attack)


@pytest.mark.parametrize(
    "rows, ok, verdict",
    [
        ([row("a", 1000), row("calm", 1000), row("hit", 850, attack="attack: bad_5xx 0")], True, "0.85 of"),
        ([row("a", 1000), row("calm", 1000), row("hit", 700, attack="attack: bad_5xx 0")], False, "0.70 of"),
        ([row("a", 1000, lost=1), row("calm", 1000), row("hit", 900, attack="attack: bad_5xx 0")], False, "0.90 of"),
        ([row("a", 1000), row("calm", 1000), row("hit", 900, attack="attack: bad_5xx 3")], False, "NOT met"),
    ],
)
def test_matrix_report_judges_the_attack_ratio_and_losses(capsys, rows, ok, verdict):
    assert bench_server_matrix.report(rows, 64, 8) is ok
    out = capsys.readouterr().out
    assert f"under attack: {verdict}" in out or verdict in out
    assert out.splitlines()[2].split() == ["a", "1000", "10.0", "50.0", "0", str(rows[0].lost)]


@pytest.mark.parametrize("kind, counted", [("me", "me"), ("header", "header")])
def test_a_second_round_attack_runs_and_is_counted(capsys, kind, counted):
    assert bench_server.main(["--seconds", "2", "--clients", "4", "--tool", "python", "--attack-kind", kind]) == 0
    out = capsys.readouterr().out
    attack = next(line for line in out.splitlines() if line.startswith("attack: "))
    counts = dict(part.rsplit(" ", 1) for part in attack[len("attack: ") :].split(", "))
    assert int(counts[counted]) > 0 and not any(k.startswith("me_") and k != "me_429" for k in counts)
    assert "errors: 0\n" in out and "lost: 0 (" in out


def attack_row(calm, hit, errors=0):
    return bench_server_matrix.AttackRow("me", calm, hit, errors, 0, "attack: me 10")


@pytest.mark.parametrize(
    "rows, ok",
    [
        ([attack_row(20.0, 39.0), attack_row(30.0, 30.0)], True),
        ([attack_row(20.0, 41.0)], False),  # over 2x
        ([attack_row(60.0, 110.0)], False),  # under 2x, over 100 ms
        ([attack_row(20.0, 20.0, errors=1)], False),
    ],
)
def test_round_two_report_judges_each_attack_by_its_own_unattacked_p99(capsys, rows, ok):
    assert bench_server_matrix.report_limits(rows, 8) is ok
    out = capsys.readouterr().out
    assert out.count("NOT met") == (0 if ok else 1)
