"""Clusters: submissions linked by flagged pairs are one group (three who
share one solution are one cluster, not three pairs), with the blocks they
share, in clusters.csv and in the page."""

import csv
import io

import pytest
import similarity_class as sc
from test_similarity_class import known_names

from grader import HANDOUT
from grader.core.assignment import Assignment
from grader.similarity import report
from grader.similarity.analysis import compare
from grader.similarity.cluster_report import CLUSTERS_HEADER, clusters_csv
from grader.similarity.clusters import find_clusters
from grader.similarity.corpus import CLASS, Submission
from grader.similarity.scoring import Pair
from grader.similarity.template import load_template


def pair(a, b, s, blocks=(), threshold=0.7):
    return Pair(a, b, "class", s, s >= threshold, tuple(blocks))


def test_flagged_pairs_join_transitively_and_unflagged_ones_do_not():
    pairs = [
        pair("a", "b", 0.95, [("nn_epoch", 1.0), ("f", 0.4)]),
        pair("d", "e", 0.9, [("f", 0.8)]),
        pair("b", "c", 0.8, [("nn_epoch", 0.9), ("g", 0.7)]),
        pair("a", "d", 0.6, [("f", 1.0)]),
        pair("c", "x", 0.1),
    ]
    clusters = find_clusters(pairs)
    assert [c.members for c in clusters] == [("b", "a", "c"), ("d", "e")]  # b has two links: first
    big = clusters[0]
    assert [(p.a, p.b) for p in big.links] == [("a", "b"), ("b", "c")]
    assert big.blocks == (("nn_epoch", 3, 1.0), ("g", 2, 0.7))  # f at 0.4 is not shown
    assert big.linked("b") == ("a", "c") and big.linked("a") == ("b",)
    assert find_clusters([pair("a", "b", 0.5)]) == ()


@pytest.fixture(scope="module")
def trio():
    template = load_template(HANDOUT, Assignment.hw1().student_files)
    known = known_names()
    people = sc.make_class(12, seed=11)
    people["copy_one"] = sc.plant_copy(people["student003"], known)
    people["copy_two"] = sc.plant_copy(people["student003"], known, keep_markers=False)
    return compare([Submission(n, CLASS, f) for n, f in people.items()], [], template)


def test_three_who_share_one_solution_are_one_cluster(trio):
    assert len(trio.clusters) == 1
    cluster = trio.clusters[0]
    assert set(cluster.members) == {"student003", "copy_one", "copy_two"} and len(cluster.links) == 3
    shared = dict((bid, n) for bid, n, _ in cluster.blocks)
    assert shared["nn_epoch"] == 3 and shared["compute_gradient_of_variables"] == 3


def test_clusters_csv_has_a_row_per_member_and_the_page_a_section(trio):
    rows = list(csv.reader(io.StringIO(clusters_csv(trio))))
    assert tuple(rows[0]) == CLUSTERS_HEADER
    assert sorted(r[2] for r in rows[1:]) == ["copy_one", "copy_two", "student003"]
    assert all(r[0] == "1" and r[1] == "3" and "nn_epoch 3/3 1.00" in r[6] for r in rows[1:])
    page = report.html_text(trio)
    assert '<section class="cluster" id="cluster-1"><h3>Cluster 1: 3 submissions</h3>' in page
    section = page.split('id="cluster-1"><h3>')[1].split("</section>")[0]
    assert section.count('<div class="side">') >= 9 and '<mark class="match">' in section
