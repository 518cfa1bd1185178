"""``triagebot report``: the review page's statistics in a terminal, as an HTML file or a PNG."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from triagebot.review import charts
from triagebot.review import data as review_data
from triagebot.text import sanitize


def text_report(data: dict[str, Any]) -> str:
    """Plain text for a terminal (names pass through ``sanitize.plain``)."""
    lines = [f"{data['decisions']} review decisions", "", "acceptance rate per dimension:"]
    for dim, weeks in sorted(data["acceptance"].items()):
        per_week = "  ".join(f"{w} {a}/{n}" for w, (a, n) in weeks.items())
        lines.append(f"  {dim:<22}{review_data.overall_rate(weeks):>6.0%}   {per_week}")
    if not data["acceptance"]:
        lines.append("  (no decisions yet)")
    lines += ["", "what the comment stated, against maintainers' decisions:"]
    lines += stated_lines(data["stated"])
    lines += ["", f"confusion matrix, {data['dimension']} (rows: bot, columns: maintainer):"]
    lines += matrix_lines(data["confusion_labels"], data["confusion"])
    lines += ["", "most frequent symptoms this month:"]
    lines += [f"  {sid:<6}{n:>5}  {sanitize.plain(name, 60)}" for sid, name, n in data["symptoms"]]
    if not data["symptoms"]:
        lines.append("  (none)")
    return "\n".join(lines)


def stated_lines(rows: list[review_data.StatedRecord]) -> list[str]:
    """Precision of stated labels and coverage, as ``triagebot eval`` prints them."""
    if not rows:
        return ["  (no decisions yet)"]
    out = []
    for row in rows:
        precision = "     -" if row.precision is None else f"{row.precision:6.0%}"
        out.append(f"  {row.dimension:<22}precision {precision} ({row.right}/{row.stated} stated)"
                   f"   coverage {row.coverage:4.0%} of {row.reviewed} reviewed")
    return out


def matrix_lines(labels: list[str], matrix: list[list[int]]) -> list[str]:
    if not labels:
        return ["  (no decisions yet)"]
    width = max(6, *(len(x) + 1 for x in labels))
    out = ["  " + " " * width + "".join(f"{x:>{width}}" for x in labels)]
    for label, row in zip(labels, matrix):
        out.append("  " + f"{label:<{width}}" + "".join(f"{v:>{width}}" for v in row))
    return out


def html_report(data: dict[str, Any]) -> str:
    """A standalone page (same template part as /review/stats, no external resources)."""
    env = Environment(loader=PackageLoader("triagebot.review", "templates"),
                      autoescape=select_autoescape(["html"]))
    pictures = {"confusion": Markup(charts.confusion_svg(data["confusion_labels"], data["confusion"],
                                                         data["dimension"])),
                "acceptance": Markup(charts.acceptance_svg(data["acceptance"]))}
    body = env.get_template("review/stats_body.html").render(
        data=data, pictures=pictures, rate=review_data.overall_rate)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>triagebot report</title></head><body style=\"font-family:sans-serif\">"
            f"<h1>triagebot report</h1><p>{data['decisions']} review decisions.</p>{body}"
            "</body></html>\n")


def write_png(data: dict[str, Any], path: Path) -> None:
    path.write_bytes(charts.confusion_png(data["confusion_labels"], data["confusion"]))
