"""Page templates and the gradebook's script, kept in Python so that any install
of the package has them. Jinja autoescapes every value; charts come as
Markup from charts.py, which escapes its own texts."""

from jinja2 import DictLoader, Environment, select_autoescape
from markupsafe import Markup, escape

from grader.server.gradebook.timing.changes import what
from grader.server.gradebook.timing.rules import shown

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} - needle grader</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 1em; max-width: 96em; color: #222; }
nav { display: flex; flex-wrap: wrap; gap: .6em; align-items: center; border-bottom: 1px solid #ddd; padding-bottom: .5em; }
nav form { display: inline; margin-left: auto; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .3em .5em; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; } td.when { white-space: nowrap; }
#gradebook th:first-child, #gradebook td:first-child { position: sticky; left: 0; background: #fff; }
th button { font: inherit; font-weight: bold; background: none; border: 0; padding: 0; cursor: pointer; }
th[aria-sort=ascending] button::after { content: " \\25B2"; } th[aria-sort=descending] button::after { content: " \\25BC"; }
.late { color: #b50; font-weight: bold; } .attention { color: #b00; font-weight: bold; } .regraded { color: #06c; font-weight: bold; } .error { color: #b00; } .ok { color: #080; } .bad { color: #b00; }
#gradebook { width: 100%; } #gradebook th { white-space: normal; } #gradebook th button { text-align: inherit; }
#gradebook .late, #gradebook .regraded, #gradebook .max { display: block; font-size: .8em; } #gradebook .max { font-weight: normal; }
#gradebook td.when { white-space: normal; min-width: 6em; } #gradebook td.name { overflow-wrap: anywhere; }
table.failures { width: 100%; } details.group > summary { padding: .2em 0; } .stats > div { min-width: 0; }
.muted { color: #666; } code { font-size: .9em; word-break: break-word; }
.chart { width: 100%; max-width: 36em; height: auto; display: block; }
.question { border-top: 1px solid #ddd; }
.stats { display: flex; flex-wrap: wrap; gap: 1.5em; } .stats > div:first-child { flex: 1 1 18em; max-width: 30em; }
.stats > div:last-child { flex: 2 1 20em; }
details { margin: .4em 0; } summary { cursor: pointer; }
input[type=search] { font: inherit; padding: .3em; width: 100%; max-width: 20em; box-sizing: border-box; }
</style>{% if script %}<script src="/static/gradebook.js" defer></script>{% endif %}</head><body>
<nav>{% if user %}{% if user.is_staff %}<a href="/gradebook">Gradebook</a>{% else %}<a href="/me">My results</a>{% endif %}
<span>Signed in as <b id="who">{{ user.name }}</b> ({{ user.role }})</span>
<form method="post" action="/logout"><button>Sign out</button></form>{% endif %}</nav>
<h1>{{ title }}</h1>
{% block body %}{% endblock %}
</body></html>"""

LOGIN = """{% extends "base" %}{% block body %}
{% if error %}<p class="error" id="error">{{ error }}</p>{% endif %}
<form method="post" action="/login">
<label>Key <input type="password" name="key" id="key" autocomplete="off" required></label>
<button type="submit" id="signin">Sign in</button>
</form>{% endblock %}"""

FORBIDDEN = """{% extends "base" %}{% block body %}
<p class="error" id="error">{{ message }}</p><p><a href="/">Back</a></p>{% endblock %}"""

# The log of changes to deadlines, extensions, late policy and verdicts (timing/changes.py).
CHANGES = """
<h2>Changes to deadlines, extensions and verdicts</h2>
{% if changes %}<div class="scroll"><table id="changes"><tr><th>when</th><th>by</th><th>what</th><th>from</th><th>to</th></tr>
{% for ch in changes %}<tr class="change"><td class="when">{{ ch.changed_at|when(zone) }}</td><td>{{ ch.changed_by }}</td>
<td>{{ ch|what }}</td>
<td>{{ ch.before }}</td><td>{{ ch.after }}</td></tr>{% endfor %}</table></div>
{% else %}<p class="muted" id="no-changes">No changes yet.</p>{% endif %}"""

# One student's cells and every submission with its cases (used by /me and the instructor's student page).
RESULTS = (
    """
<div class="scroll"><table id="scores"><tr><th>question</th><th class="num">cases passed</th><th class="num">score</th><th>deadline</th></tr>
{% for q, c in cells %}<tr><td>{{ q.label }}</td>
<td class="num">{% if c.score is none %}not submitted{% else %}{{ c.correct }} / {{ c.total }}{% endif %}</td>
<td class="num">{% if c.attention %}<span class="attention">needs attention</span> <span class="reason">{{ c.attention }}</span>{% elif c.score is not none %}{{ "%.0f"|format(100 * c.score) }}% <span class="muted source">({{ c.source }})</span>{% if c.late %} <span class="late">late</span>{% endif %}{% if c.penalty %} <span class="penalty">late penalty -{{ "%.0f"|format(100 * c.penalty) }}%</span>{% endif %}{% if c.previous is not none %} <span class="regraded" title="regraded: was {{ "%.0f"|format(100 * c.previous) }}%">regraded (was {{ "%.0f"|format(100 * c.previous) }}%)</span>{% endif %}{% endif %}{% if c.practice is not none %} <span class="muted practice">practice {{ "%.0f"|format(100 * c.practice) }}%, not counted</span>{% endif %}</td>
<td class="when deadline">{% set due = c.due or q.deadline %}{{ due|when(zone) if due else "-" }}{% if c.late_days %} <span class="late-days">({{ c.late_days }} late day{{ "s" if c.late_days != 1 }} spent)</span>{% endif %}</td></tr>
{% endfor %}<tr><td><b>total</b></td><td></td><td class="num"><b>{{ "%.1f"|format(total) }}%</b></td><td></td></tr></table></div>
<h2>Submissions</h2>
{% for s in subs %}{% set a = s.attempt %}
<details class="submission"{% if loop.first %} open{% endif %}><summary><b>{{ a.question }}</b> {{ a.when.strftime(time_format) }}
- {{ a.correct }} / {{ a.total }} cases, {{ "%.0f"|format(100 * a.score) }}%{% if a.late %} <span class="late">late</span>{% endif %}{% if a.penalty %} <span class="penalty">late penalty -{{ "%.0f"|format(100 * a.penalty) }}%</span>{% endif %}{% if a.source == "server" and a.previous is not none %} <span class="regraded">regraded (was {{ "%.0f"|format(100 * a.previous) }}%)</span>{% endif %}
<span class="muted">({{ a.source }})</span></summary>
<div class="scroll"><table class="cases"><tr><th>case</th><th>name</th><th>result</th><th>reason</th><th>what it checks</th></tr>
{% for c in s.cases %}<tr><td>{{ c.label }}{% if c.hidden %} <span class="muted">(hidden)</span>{% endif %}</td><td>{{ c.name }}</td>
<td class="{{ 'ok' if c.passed else 'bad' }}">{{ 'correct' if c.passed else 'wrong' }}</td>
<td>{{ c.reason }}</td><td><code>{{ c.description }}</code></td></tr>
{% else %}<tr><td colspan="5" class="muted">{% if a.attention %}<span class="attention">needs attention</span>: {{ a.attention }}{% else %}no case results{% if a.source != "server" %}: see the grader's output{% endif %}{% endif %}</td></tr>{% endfor %}
</table></div></details>
{% else %}<p id="no-submissions">No submissions yet.</p>{% endfor %}"""
    + CHANGES
)

ME = """{% extends "base" %}{% block body %}""" + RESULTS + """{% endblock %}"""

STUDENT = (
    """{% extends "base" %}{% block body %}
<p><a href="/gradebook">Back to the gradebook</a>{% if row and row.last %} - last submission {{ row.last.strftime(time_format) }}{% endif %}</p>
"""
    + RESULTS
    + """{% endblock %}"""
)

# Cells show points (a question's score times its weight); the percent and the on-time
# score are on hover. The table fits a 1400 px window: headers and tags wrap.
GRADEBOOK = (
    """{% extends "base" %}{% block body %}
<p>{{ book.rows|length }} students, {{ book.questions|length }} questions, {{ book.max_points|points }} points.
Cells show points; hover for percent and on-time score.
<a id="csv" href="/gradebook.csv?full=1" download="grades.csv">Download CSV</a></p>
<p><label for="search">Search students</label><br><input type="search" id="search" placeholder="name" autocomplete="off"></p>
<div class="scroll"><table id="gradebook"><thead><tr>
<th data-type="text"><button type="button">student</button></th>
{% for q in book.questions %}{% set a, _, p = q.label.partition("/") %}<th class="num" data-type="num" title="{{ q.label }}: {{ q.weight|points }} points{% if q.deadline %}, due {{ q.deadline.strftime(time_format) }}{% endif %}"><button type="button">{{ a }}/<wbr>{{ p|breakable }}</button> <span class="max muted">/{{ q.weight|points }}</span></th>{% endfor %}
<th class="num" data-type="num"><button type="button">total</button> <span class="max muted">/{{ book.max_points|points }}</span></th>
<th class="num" data-type="num" title="points from answers sent before each question's deadline"><button type="button">on time</button></th>
<th data-type="text"><button type="button">late</button></th>
<th data-type="text"><button type="button">last submission</button></th></tr></thead><tbody>
{% for r in book.rows %}{% set late = [] %}<tr class="student" data-name="{{ r.name|lower }}">
<td class="name" data-value="{{ r.name|lower }}"><a href="/gradebook/student?name={{ r.name|urlencode }}">{{ r.name }}</a></td>
{% for c in r.cells %}{% set q = book.questions[loop.index0] %}{% if c.late %}{% set _ = late.append(q.label) %}{% endif %}
<td class="num" data-value="{{ -1 if c.score is none else c.score * q.weight }}"{% if c.score is not none %} title="{{ "%.0f"|format(100 * c.score) }}% ({{ c.correct }} of {{ c.total }} cases){% if c.late %}; on time {{ (c.on_time * q.weight)|points }} points ({{ "%.0f"|format(100 * c.on_time) }}%){% endif %}{% if c.penalty %}; late penalty -{{ "%.0f"|format(100 * c.penalty) }}%{% endif %}{% if c.late_days %}; {{ c.late_days }} late days spent{% endif %}; counted: {{ c.source }} {{ c.submission }}{% if c.practice is not none %}; practice {{ "%.0f"|format(100 * c.practice) }}%, not counted{% endif %}"{% elif c.practice is not none %} title="practice {{ "%.0f"|format(100 * c.practice) }}%, not counted"{% endif %} data-source="{{ c.source }}" data-submission="{{ c.submission }}">{% if c.attention %}<span class="attention" title="{{ c.attention }}">needs attention</span> <span class="reason">{{ c.attention }}</span>{% elif c.score is none %}-{% if c.practice is not none %} <span class="muted practice">practice</span>{% endif %}{% else %}{{ (c.score * q.weight)|points }}{% if c.late %} <span class="late">late</span>{% endif %}{% if c.previous is not none %} <span class="regraded" title="regraded: was {{ "%.0f"|format(100 * c.previous) }}%">regraded</span>{% endif %}{% endif %}</td>{% endfor %}
<td class="num total" data-value="{{ r.total }}" title="{{ "%.1f"|format(r.total) }}%">{{ (r.total * book.max_points / 100)|points }}</td>
<td class="num on-time" data-value="{{ r.on_time_total }}" title="{{ "%.1f"|format(r.on_time_total) }}%">{{ (r.on_time_total * book.max_points / 100)|points }}</td>
<td class="late-list" data-value="{{ late|join(' ') }}">{{ late|join(', ') }}</td>
<td class="when" data-value="{{ r.last.isoformat() if r.last else '' }}">{{ r.last.strftime(time_format) if r.last else '-' }}</td></tr>
{% endfor %}</tbody></table></div>
<p id="no-match" hidden>No student matches.</p>
{% for times in book.times %}<h2>Submissions over time: {{ times[0] }}</h2>
<p>{{ times[2]|length }} server submissions{% if times[1] %}; last deadline {{ times[1].strftime(time_format) }}{% endif %}.</p>
{{ timelines[loop.index0] }}{% endfor %}"""
    + CHANGES
    + """
{% for q in book.questions %}{% set st = book.stats[loop.index0] %}
<section class="question" id="q-{{ loop.index0 }}"><h2>{{ q.label }}</h2>
<div class="stats"><div><p class="summary">{{ st.submitted }} submitted,
mean {{ "-" if st.mean is none else "%.0f%%"|format(100 * st.mean) }},
median {{ "-" if st.median is none else "%.0f%%"|format(100 * st.median) }}</p>
{{ histograms[loop.index0] }}</div>
<div class="failures">{% for g in st.groups %}
<details class="group{{ ' failing' if g.failed else ' passing' }}"{% if g.failed and g.cases|length <= open_group %} open{% endif %}>
<summary>{% if g.failed %}<b>failed by {{ g.failed }} of {{ g.tried }} students ({{ "%.0f"|format(100 * g.rate) }}%)</b>{% else %}passed by all {{ g.tried }} who tried{% endif %}: {{ g.cases|length }} case{{ "s" if g.cases|length != 1 }}</summary>
<div class="scroll"><table class="failures"><tr><th>case</th><th>source</th><th class="num">failed</th><th>description</th></tr>
{% for c in g.cases %}<tr><td>{{ c.name }}</td><td>{{ c.source }}</td>
<td class="num" title="{{ c.failed }} of {{ c.tried }} students never passed it">{{ "%.0f"|format(100 * c.rate) }}% ({{ c.failed }}/{{ c.tried }})</td>
<td><code>{{ c.description }}</code></td></tr>{% endfor %}</table></div></details>
{% else %}<p class="muted">no answers yet</p>{% endfor %}</div></div></section>
{% endfor %}{% endblock %}"""
)

# Sorting and search of the student table; no inline script, so the CSP can forbid inline code.
SCRIPT = """(function () {
  var table = document.getElementById("gradebook");
  if (!table) return;
  var body = table.tBodies[0], search = document.getElementById("search");
  var none = document.getElementById("no-match");
  function rows() { return Array.prototype.slice.call(body.rows); }
  function filter() {
    var text = search.value.trim().toLowerCase(), shown = 0;
    rows().forEach(function (r) {
      var hit = r.getAttribute("data-name").indexOf(text) !== -1;
      r.hidden = !hit; if (hit) shown++;
    });
    none.hidden = shown !== 0;
  }
  search.addEventListener("input", filter);
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.querySelector("button").addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending", num = th.getAttribute("data-type") === "num";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var sorted = rows().sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-value"), y = b.cells[col].getAttribute("data-value");
        var d = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return up ? d : -d;
      });
      sorted.forEach(function (r) { body.appendChild(r); });
    });
  });
})();
"""

env = Environment(
    loader=DictLoader(
        {"base": BASE, "login": LOGIN, "forbidden": FORBIDDEN, "me": ME, "student": STUDENT, "gradebook": GRADEBOOK}
    ),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
OPEN_GROUP = 5  # a failing group of at most this many cases starts open; larger ones and passing ones collapsed


def points(value: float) -> str:
    """7.5, 10, 2.33: at most two decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def breakable(name: str) -> Markup:
    """A name that may wrap after each '_' (compute_<wbr>gradient), escaped."""
    return Markup("_<wbr>").join(escape(part) for part in name.split("_"))


env.filters["points"] = points
env.filters["when"] = shown  # a stored UTC time in the course's zone and in UTC
env.filters["what"] = what  # what a logged change moved
env.filters["breakable"] = breakable


def render(name: str, **context) -> str:
    context.setdefault("user", None)
    context.setdefault("script", False)
    context.setdefault("time_format", "%Y-%m-%d %H:%M UTC")
    context.setdefault("open_group", OPEN_GROUP)
    context.setdefault("zone", "")
    context.setdefault("changes", ())
    return env.get_template(name).render(**context)
