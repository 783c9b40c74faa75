"""Every paired sample side by side (imported Inspect AI logs): HTML only (``_samples.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from evaldelta.report._samples import SamplesView, samples_views
from evaldelta.report.sections._base import Report, Section
from evaldelta.report.sections._html import piece

__all__ = ["SAMPLES"]


@dataclass(frozen=True)
class SamplesSectionView:
    samples: tuple[SamplesView, ...]


class _Samples(Section[SamplesSectionView]):
    name = "samples"
    formats = frozenset(("html",))

    def view(self, report: Report) -> SamplesSectionView:
        return SamplesSectionView(tuple(samples_views(report.comparison)))

    def html(self, view: SamplesSectionView) -> str:
        # the blank line after it is the page's, between this piece and the next
        return piece("_samples.html.j2", samples=list(view.samples)) + "\n"


SAMPLES = _Samples()
