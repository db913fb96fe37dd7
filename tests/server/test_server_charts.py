"""The inline SVG charts: bars, counts, the deadline line, escaping."""

import datetime as dt
import re

from grader.server.web import charts

DEADLINE = dt.datetime(2026, 2, 1, 23, 59)


def bars(svg: str):
    return [(float(h), fill) for h, fill in re.findall(r'<rect [^>]*height="([\d.]+)" fill="(#\w+)"', svg)]


def test_histogram_draws_one_bar_per_bin_scaled_to_the_largest():
    svg = str(charts.histogram(["a", "b", "<none>"], [2, 4, 0], 'q "1" <script>'))
    heights = [h for h, _ in bars(svg)]
    assert len(heights) == 3 and heights[1] == 2 * heights[0] and heights[2] == 0
    assert bars(svg)[2][1] == "#999"  # never submitted: grey
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "&lt;none&gt;" in svg
    assert ">4</text>" in svg


def test_timeline_buckets_around_the_deadline_and_marks_late_bars():
    times = [DEADLINE - dt.timedelta(hours=h) for h in (30, 5, 4, 1)] + [DEADLINE + dt.timedelta(hours=2)]
    times.append(DEADLINE - dt.timedelta(days=30))  # far before: outside the window
    svg = str(charts.timeline(sorted(times), DEADLINE, "hw1"))
    drawn = bars(svg)
    # a week before to a day after in 6 h bars: 30 h before; 5, 4 and 1 h before (18:00-24:00); 2 h after
    assert [round(h / drawn[0][0], 1) for h, _ in drawn] == [1, 3, 1]  # heights rounded to 0.1 px
    assert [fill for _, fill in drawn] == ["#3a7bd5", "#3a7bd5", "#e8893a"]  # late: orange
    assert svg.count('class="deadline"') == 1 and "6 h per bar" in svg
    assert ">2026-01-25 18:00<" in svg  # a week before the deadline, not the submission 30 days before
    assert charts.bucket_size(dt.timedelta(hours=40)) == dt.timedelta(hours=1)
    assert charts.bucket_size(dt.timedelta(days=10)) == dt.timedelta(hours=6)


def test_timeline_without_deadline_spans_the_submissions_and_is_empty_without_any():
    t0 = dt.datetime(2026, 1, 1, 10, 30)
    svg = str(charts.timeline([t0, t0 + dt.timedelta(minutes=10)], None, "hw1"))
    assert len(bars(svg)) == 1 and "deadline" not in svg
    assert str(charts.timeline([], DEADLINE, "hw1")) == ""
