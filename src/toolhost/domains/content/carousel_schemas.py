"""Inputs and outputs of create_carousel and delete_carousel (CATALOG.md §2)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from toolhost.domains.content.schemas import CarouselSlide, GenerateCarouselIn
from toolhost.platform.fields import Confirm, TextFormat, UUIDStr
from toolhost.platform.registry import ToolInput, ToolOutput

TemplatePack = Literal["sn_signal_carousel_v1", "sn_performance_recap_v1", "sn_showcase_ad_v1"]


class CreateCarouselIn(GenerateCarouselIn):
    """generate_carousel's arguments plus how the slides are rendered."""

    image_model: Annotated[str, StringConstraints(max_length=200)] | None = Field(
        default=None, description="A configured image model or alias; default: builtin (the slide typesetter)."
    )
    template_pack_id: TemplatePack | None = Field(
        default=None,
        description="A built-in pack (7, 5 and 6 slides); overrides template_id and slide_count.",
    )
    image_style_suffix: Annotated[str, StringConstraints(max_length=500)] | None = Field(
        default=None, description="Appended to an image provider's prompt."
    )
    brand_id: Annotated[str, StringConstraints(max_length=100)] | None = Field(
        default=None, description="An accessible project id whose brand supplies the visuals; default: the project."
    )
    response_format: TextFormat = "text"


class CreateCarouselSlide(CarouselSlide):
    """One slide's text and its image job."""

    imageJobId: str | None
    imageError: str | None
    imageBillingStatus: str | None


class BrandApplied(ToolOutput):
    """The brand whose visuals the slides use."""

    brandName: str | None
    hasLogo: bool
    stylePrefix: str


class FailedSlide(ToolOutput):
    """A slide whose image could not be made, and its refund."""

    slideNumber: int
    error: str
    credits_reserved: int
    credits_charged: int
    credits_refunded: int
    billing_status: str
    failure_reason: str


class CreateCarouselCredits(ToolOutput):
    """What the carousel costs: the text, and the images reserved, charged and refunded."""

    textGeneration: int
    imagesEstimated: int
    imagesCharged: int
    imagesRefunded: int
    billingUnknownSlides: int
    totalEstimated: int


class CreateCarouselOut(ToolOutput):
    """The carousel's slides with one image job each."""

    carouselId: str
    templateId: str
    templatePackId: str | None
    style: str
    slideCount: int
    slides: list[CreateCarouselSlide]
    imageModel: str
    brandApplied: BrandApplied | None
    jobIds: list[str]
    failedSlides: list[FailedSlide]
    credits: CreateCarouselCredits

    def summary(self) -> str:
        lines = [
            f"Carousel {self.carouselId} ({self.templateId}, {self.style}): {self.slideCount} slides, "
            f"{len(self.jobIds) - len(self.failedSlides)} image jobs queued ({self.imageModel})"
        ]
        for slide in self.slides:
            state = f"error: {slide.imageError}" if slide.imageError else f"job {slide.imageJobId}"
            lines.append(f"{slide.slideNumber}. {slide.headline or ''} [{state}]")
        lines.append(
            f"Credits: {self.credits.textGeneration} text + {self.credits.imagesCharged} images reserved"
            + (f", {self.credits.imagesRefunded} refunded" if self.credits.imagesRefunded else "")
        )
        lines.append("Next: poll each job with check_status, then schedule_post with job_ids and CAROUSEL_ALBUM.")
        return "\n".join(lines)


class DeleteCarouselIn(ToolInput):
    """The carousel record to delete."""

    content_id: UUIDStr
    confirm: Confirm
    project_id: UUIDStr | None = None


class DeleteCarouselOut(ToolOutput):
    """What the delete did."""

    success: bool
    deleted: bool
    content_id: str
    jobs_cancelled: int
    refunded_credits: int
    message: str

    def summary(self) -> str:
        return self.message
