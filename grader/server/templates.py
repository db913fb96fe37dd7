"""Page templates, kept in Python so that any install of the package has them."""
from jinja2 import DictLoader, Environment, select_autoescape

BASE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} - needle grader</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.bar { background: #4a7; height: .9em; display: inline-block; vertical-align: middle; }
.late { color: #b50; } .error { color: #b00; } nav form { display: inline; }
</style></head><body>
<nav>{% if user %}Signed in as <b id="who">{{ user.name }}</b> ({{ user.role }})
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

ME = """{% extends "base" %}{% block body %}
<table id="scores"><tr><th>problem</th><th>cases passed</th><th>score</th></tr>
{% for p, c in cells %}<tr><td>{{ p.label }}</td>
<td>{% if c.score is none %}not submitted{% else %}{{ c.correct }} / {{ c.total }}{% endif %}</td>
<td>{% if c.score is not none %}{{ "%.0f"|format(100 * c.score) }}%{% if c.late %} <span class="late">late</span>{% endif %}{% endif %}</td></tr>
{% endfor %}<tr><td><b>total</b></td><td></td><td><b>{{ "%.1f"|format(total) }}%</b></td></tr></table>
<h2>Submissions</h2>
<table id="history"><tr><th>problem</th><th>time</th><th>correct</th><th>answered</th><th>late</th></tr>
{% for a in attempts %}<tr><td>{{ a.problem }}</td><td>{{ a.when }}</td><td>{{ a.correct }} / {{ a.total }}</td>
<td>{{ a.answered }}</td><td>{% if a.late %}<span class="late">late</span>{% endif %}</td></tr>
{% else %}<tr><td colspan="5">no submissions yet</td></tr>{% endfor %}</table>{% endblock %}"""

GRADEBOOK = """{% extends "base" %}{% block body %}
<p><a id="csv" href="/gradebook.csv">Download CSV</a> - {{ book.rows|length }} students</p>
<table id="gradebook"><tr><th>student</th>{% for p in book.problems %}<th>{{ p.label }}</th>{% endfor %}<th>total</th></tr>
{% for r in book.rows %}<tr class="student"><td>{{ r.name }}</td>
{% for c in r.cells %}<td>{% if c.score is none %}-{% else %}{{ "%.0f"|format(100 * c.score) }}%{% if c.late %} <span class="late">late</span>{% endif %}{% endif %}</td>{% endfor %}
<td>{{ "%.1f"|format(r.total) }}%</td></tr>{% endfor %}</table>
{% for p in book.problems %}{% set i = loop.index0 %}
<h2>{{ p.label }}</h2>
<table class="histogram"><tr><th>score</th><th>students</th><th></th></tr>
{% for label in bins %}{% set n = book.histograms[i][loop.index0] %}
<tr><td>{{ label }}</td><td>{{ n }}</td><td><span class="bar" style="width: {{ (200 * n / (book.rows|length or 1))|int }}px"></span></td></tr>{% endfor %}
</table>
<table class="passrate"><tr><th>case</th><th>pass rate</th></tr>
{% for idx, rate in book.pass_rates[i] %}<tr><td>{{ idx }}</td><td>{% if rate is none %}-{% else %}{{ "%.0f"|format(100 * rate) }}%{% endif %}</td></tr>{% endfor %}
</table>{% endfor %}{% endblock %}"""

env = Environment(loader=DictLoader({"base": BASE, "login": LOGIN, "forbidden": FORBIDDEN,
                                     "me": ME, "gradebook": GRADEBOOK}),
                  autoescape=select_autoescape(default=True, default_for_string=True))


def render(name: str, **context) -> str:
    context.setdefault("user", None)
    return env.get_template(name).render(**context)
