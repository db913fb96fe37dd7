"""Inline SVG charts: no script, no CDN, so the pages work offline and under
a strict Content-Security-Policy. Every text is escaped; sizes scale with
the page through the viewBox."""

import datetime as dt

from markupsafe import Markup, escape

BUCKETS = (
    dt.timedelta(hours=1),
    dt.timedelta(hours=3),
    dt.timedelta(hours=6),
    dt.timedelta(hours=12),
    dt.timedelta(days=1),
    dt.timedelta(days=7),
)
MAX_BARS = 48
# Around a deadline: at least two days before and one after, at most a week before and three days after.
WINDOW_BEFORE, WINDOW_AFTER = dt.timedelta(days=7), dt.timedelta(days=3)
CONTEXT_BEFORE, CONTEXT_AFTER = dt.timedelta(days=2), dt.timedelta(days=1)


def histogram(labels, counts, title: str) -> Markup:
    """Vertical bars from the left, one per label, with its count above it; the last bar
    (never submitted) in grey."""
    width, height, top, bottom = 420, 170, 18, 34
    step = width / max(1, len(counts))
    peak = max(counts, default=0) or 1
    parts = [
        f'<svg class="chart histogram" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for i, (label, n) in enumerate(zip(labels, counts)):
        h = (height - top - bottom) * n / peak
        x, y = i * step + 4, height - bottom - h
        fill = "#999" if i == len(counts) - 1 else "#3a7bd5"
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{step - 8:.1f}" height="{h:.1f}" fill="{fill}">'
            f"<title>{escape(label)}: {n}</title></rect>"
        )
        parts.append(
            f'<text x="{x + (step - 8) / 2:.1f}" y="{y - 4:.1f}" text-anchor="middle" font-size="12">{n}</text>'
        )
        parts.append(
            f'<text x="{x + (step - 8) / 2:.1f}" y="{height - bottom + 15:.1f}" text-anchor="middle" '
            f'font-size="11">{escape(label)}</text>'
        )
    parts.append(f'<line x1="0" y1="{height - bottom}" x2="{width}" y2="{height - bottom}" stroke="#444"/></svg>')
    return Markup("".join(parts))


def bucket_size(span: dt.timedelta) -> dt.timedelta:
    return next((b for b in BUCKETS if span / b <= MAX_BARS), BUCKETS[-1])


def timeline(times, deadline, title: str) -> Markup:
    """Submissions per time bucket; with a deadline, the days around it (submissions
    further away are left out), a red line at the deadline and late bars in orange."""
    if not times:
        return Markup("")
    start, end = times[0], times[-1]
    if deadline is not None:
        start = max(min(start, deadline - CONTEXT_BEFORE), deadline - WINDOW_BEFORE)
        end = min(max(end, deadline + CONTEXT_AFTER), deadline + WINDOW_AFTER)
    size = bucket_size(max(end - start, dt.timedelta(hours=1)))
    start = _floor(start, size)
    n = max(1, int((end - start) / size) + 1)
    counts = [0] * n
    for t in times:
        if start <= t < start + n * size:
            counts[int((t - start) / size)] += 1
    width, height, top, bottom = 600, 180, 18, 34
    step, peak = width / n, max(counts) or 1
    parts = [
        f'<svg class="chart timeline" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for i, c in enumerate(counts):
        if not c:
            continue
        h = (height - top - bottom) * c / peak
        when = start + i * size
        late = deadline is not None and when >= deadline
        parts.append(
            f'<rect x="{i * step:.1f}" y="{height - bottom - h:.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{h:.1f}" fill="{"#e8893a" if late else "#3a7bd5"}">'
            f"<title>{when:%Y-%m-%d %H:%M}: {c}</title></rect>"
        )
    if deadline is not None and start <= deadline <= start + n * size:
        x = (deadline - start) / size * step
        parts.append(
            f'<line class="deadline" x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{height - bottom}" '
            f'stroke="#c00" stroke-width="2" stroke-dasharray="4 3"/>'
            f'<text x="{x + 4:.1f}" y="{top}" font-size="12" fill="#c00">deadline</text>'
        )
    parts.append(f'<line x1="0" y1="{height - bottom}" x2="{width}" y2="{height - bottom}" stroke="#444"/>')
    parts.append(f'<text x="0" y="{height - 12}" font-size="11">{start:%Y-%m-%d %H:%M}</text>')
    parts.append(
        f'<text x="{width}" y="{height - 12}" font-size="11" text-anchor="end">'
        f"{start + n * size:%Y-%m-%d %H:%M} UTC, {_span(size)} per bar</text></svg>"
    )
    return Markup("".join(parts))


def _floor(t: dt.datetime, size: dt.timedelta) -> dt.datetime:
    epoch = dt.datetime(1970, 1, 5)  # a Monday, so weekly bars start on Mondays
    return epoch + ((t - epoch) // size) * size


def _span(size: dt.timedelta) -> str:
    hours = int(size.total_seconds() // 3600)
    return f"{hours} h" if hours < 24 else f"{hours // 24} d"
