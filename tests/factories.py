"""factory_boy factories for the study model (other apps add their own beside theirs)."""

import factory
from django.contrib.auth.models import User

from annotation.enums import Role, SystemKind
from annotation.models import Candidate, Original, Study, StudyMembership, System


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "pw")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    name = factory.Sequence(lambda n: f"Study {n}")
    owner = factory.SubFactory(UserFactory)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StudyMembership

    study = factory.SubFactory(StudyFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.JUDGE


class OriginalFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Original

    study = factory.SubFactory(StudyFactory)
    external_id = factory.Sequence(lambda n: f"o{n}")
    text = factory.Sequence(lambda n: f"The original sentence number {n} is here.")
    position = factory.Sequence(lambda n: n)


class SystemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = System

    study = factory.SubFactory(StudyFactory)
    name = factory.Sequence(lambda n: f"system{n}")
    kind = SystemKind.IMPORTED


class CandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Candidate

    original = factory.SubFactory(OriginalFactory)
    system = factory.SubFactory(SystemFactory, study=factory.SelfAttribute("..original.study"))
    text = factory.Sequence(lambda n: f"A paraphrase, number {n}.")


def study_with_data(*, n_originals=5, systems=("human", "machine"), owner=None, name=None) -> Study:
    """A study with ``n_originals`` originals and one candidate per system each."""
    kwargs = {"owner": owner} if owner else {}
    if name:
        kwargs["name"] = name
    study = StudyFactory(**kwargs)
    StudyMembership.objects.get_or_create(study=study, user=study.owner, role=Role.RESEARCHER)
    sys_objs = [SystemFactory(study=study, name=s) for s in systems]
    for i in range(n_originals):
        o = OriginalFactory(study=study, external_id=f"s{i}", text=f"Original sentence {i} says something plain.")
        for s in sys_objs:
            CandidateFactory(original=o, system=s, text=f"Sentence {i} from {s.name} says something else.")
    return study
