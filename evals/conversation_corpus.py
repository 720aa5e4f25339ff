"""A conversational corpus for the learning benchmark: dated multi-session chats between
two friends, and questions whose evidence is given as turn ids (issue 20 §4).

Generated, seeded and committed (``data/evals/conversations/``): the public benchmarks
of this kind ship in no package and some carry non-commercial licences. Each chat is
sixteen dated sessions of small talk in which the two people mention what happens in
their lives: a class they join, a pet, a trip, a new job. Later sessions follow an event
up ("the vase I made at pottery..."). Every turn is one knowledge chunk, stored as a
benchmark of this kind stores it: ``"[<session date>] <Speaker>: <text>"``.

Questions come in three kinds, as in LoCoMo (Maharana et al. 2024):

- ``single-hop``: one turn answers ("What instrument did Priya start learning?");
- ``temporal``: the turn's session date answers ("When did Marcus run his first half
  marathon?");
- ``multi-hop``: two turns of one event, sessions apart, answer together ("What did
  Melanie make at the class she joined in March?").

Several questions ask about one event, so a turn punished for one question may be the
evidence of another: the failure mode issue 20 measured on the public benchmark. Each
training question has one paraphrase (other words, same evidence); a line worded like
another with other evidence is written to ``removed.jsonl`` instead. Splits: a question is
``train`` or ``heldout`` by a hash of its id; the benchmark's folds cut both again.

How to run::

    python -m evals.conversation_corpus data/evals/conversations
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from evals.evalset import drop_ambiguous

SEED = 20
CONVERSATIONS = 8
SESSIONS = 16
EVENTS_PER_CHAT = 12
HELDOUT_SHARE = 0.25

PEOPLE = [
    ("Melanie", "Caroline"),
    ("Marcus", "Priya"),
    ("Jonas", "Aiko"),
    ("Deshawn", "Lucia"),
    ("Tomasz", "Fatima"),
    ("Grace", "Oliver"),
    ("Nadia", "Ben"),
    ("Rosa", "Kwame"),
]

FILLER_OPEN = [
    "Hey! How was your week?",
    "Hi! It's been a while, how are you doing?",
    "Morning! Did you sleep at all? I saw you online at 2am.",
    "Hey you, long week huh?",
    "Hi!! Got a minute to catch up?",
    "Heyy, happy Friday!",
    "Hello stranger, how's life treating you?",
]
FILLER_REPLY = [
    "Pretty good, just tired. Work has been a lot lately.",
    "Not bad at all! Busy, but the good kind of busy.",
    "Honestly a bit chaotic, but I'm hanging in there.",
    "Good good. The weather finally got nicer here so I'm happier.",
    "Ugh, Monday felt like it lasted a week. But I'm okay!",
    "Can't complain. Well, I can, but I won't, haha.",
]
FILLER_CHAT = [
    "Haha that's amazing.",
    "Wow, I didn't expect that!",
    "That sounds so nice.",
    "Oh no, that's rough. Hope it gets better.",
    "Totally get that.",
    "Same here honestly.",
    "Lol yes, exactly.",
    "I'm so happy for you!",
    "That's a lot to deal with, proud of you.",
    "Tell me more next time!",
    "We should get coffee soon and talk properly.",
    "Ha, classic.",
    "Did you watch the game on Sunday? Brutal ending.",
    "I've been binge-watching a baking show, it's weirdly calming.",
    "My neighbour started renovating, so it's drills at 7am every day.",
    "I keep meaning to cook more but end up ordering takeout.",
    "The traffic this week was unreal.",
    "I finally cleaned my inbox, feels great.",
    "Talk soon!",
    "Gotta run, dinner's ready. Bye!",
    "Okay I need to sleep, night!",
]


@dataclass(frozen=True)
class Event:
    """Something that happens to one person: the turn that tells it, the other's
    reaction, and a follow-up some sessions later; and the questions about it."""

    say: str
    react: str
    follow: str
    questions: Sequence[tuple[str, str, str, str]]  # (kind, question, paraphrase, evidence)
    slots: dict[str, Sequence[str]] = field(default_factory=dict)
    echo: str = ""  # the friend, later, in passing: the words again, and no answer


# The events read best with one template per line, so the formatter leaves them.
# Evidence: "say", "follow" or "both". {P} is the person, {O} the friend, {month} the
# month of the "say" session; other slots are drawn from ``slots``.
# fmt: off
EVENTS = [
    Event(
        "Guess what, I signed up for a {craft} class at the community centre! First one was Tuesday.",
        "No way, {craft}? That's so you. Send pictures!",
        "So remember my {craft} class? I finally finished something, a {made} for my mom.",
        [("single-hop", "What class did {P} sign up for at the community centre?",
          "Which class at the community centre did {P} join?", "say"),
         ("multi-hop", "What did {P} make in the class {P} joined in {month}?",
          "{P} started a class in {month}; what was the first thing {P} finished there?", "both"),
         ("temporal", "When did {P} start the {craft} class?",
          "Roughly what date did {P} begin going to {craft}?", "say")],
        {"craft": ["pottery", "watercolour", "woodworking", "stained glass", "calligraphy"],
         "made": ["lopsided blue vase", "small fruit bowl", "birdhouse", "bookmark set"]},
        echo='My cousin keeps asking about {craft} classes since I told her about yours, haha.',
    ),
    Event(
        "Big news: we adopted a {animal} from the shelter! We named {pron} {pet}.",
        "Oh my gosh, {pet} is the cutest name. I need to meet {pron}!",
        "{pet} chewed through my favourite sneakers yesterday. Can't even be mad.",
        [("single-hop", "What is the name of the {animal} {P} adopted?",
          "What did {P} call the shelter {animal}?", "say"),
         ("single-hop", "What did {pet} chew through?",
          "Which of {P}'s things got destroyed by the pet?", "follow"),
         ("temporal", "When did {P} adopt {pet}?",
          "Around when did {pet} come home with {P}?", "say")],
        {"animal": ["dog", "cat", "rabbit"], "pron": ["her", "him"],
         "pet": ["Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Ziggy"]},
        echo='Saw a {animal} that looked exactly like {pet} at the park today!',
    ),
    Event(
        "I just booked flights to {place} for a week! Leaving end of the month.",
        "Jealous!! {place} has been on my list forever.",
        "Back from {place}. The highlight was {highlight}, honestly unforgettable.",
        [("single-hop", "Where did {P} fly to for a week?",
          "Which destination did {P} book flights for?", "say"),
         ("multi-hop", "What was the highlight of the trip {P} booked in {month}?",
          "{P} planned a trip in {month}; what did {P} enjoy most there?", "both"),
         ("temporal", "When did {P} book the trip to {place}?",
          "What date was it that {P} bought tickets for {place}?", "say")],
        {"place": ["Lisbon", "Kyoto", "Reykjavik", "Oaxaca", "Tbilisi", "Cape Town"],
         "highlight": ["a sunrise hike", "a night food market", "a boat tour of the coast",
                       "a tiny jazz bar we stumbled into"]},
        echo='A coworker just got back from {place} too, everyone is going there now.',
    ),
    Event(
        "So I accepted the offer from {company}! I start as a {role} in two weeks.",
        "Congratulations!!! {company} is lucky to have you.",
        "First month at {company} done. My manager {boss} is great, very chill.",
        [("single-hop", "Which company did {P} accept a job offer from?",
          "Who is {P}'s new employer?", "say"),
         ("single-hop", "What is the name of {P}'s manager at the new job?",
          "Who does {P} report to at work now?", "follow"),
         ("temporal", "When did {P} accept the job at {company}?",
          "What was the date {P} said yes to {company}?", "say")],
        {"company": ["Northwind Labs", "Bluefin Logistics", "Arcadia Health", "Kestrel Games"],
         "role": ["data analyst", "UX designer", "project manager", "backend engineer"],
         "boss": ["Renata", "Samir", "Beatrix", "Kofi"]},
        echo='Heard {company} is hiring more people, is it as nice as it sounds?',
    ),
    Event(
        "I did it, I ran my first {race} this morning! {time} minutes, my legs are jelly.",
        "That's incredible, you trained so hard for it!",
        "Signed up for another {race} in the autumn, this time I want to beat {time}.",
        [("single-hop", "What race did {P} run for the first time?",
          "Which running event did {P} complete first?", "say"),
         ("single-hop", "What was {P}'s time in the first {race}?",
          "How many minutes did {P} need for that first {race}?", "say"),
         ("temporal", "When did {P} run the first {race}?",
          "On what date did {P} finish that first {race}?", "say")],
        {"race": ["half marathon", "10k", "trail run", "triathlon sprint"],
         "time": ["58", "112", "131", "74"]},
        echo='I watched a {race} on TV last night and thought of you.',
    ),
    Event(
        "I've been going to a {group} every {day}. It's been really good for me.",
        "I love that you found a place like that. How are the people?",
        "At the {group} on {day} someone shared a story that made me cry, in a good way.",
        [("single-hop", "What group does {P} go to every {day}?",
          "Which weekly group has {P} been attending?", "say"),
         ("temporal", "When did {P} first mention going to the {group}?",
          "Since roughly when has {P} been part of the {group}?", "say"),
         ("single-hop", "What day of the week does {P} attend the {group}?",
          "On which weekday is {P}'s {group}?", "say")],
        {"group": ["LGBTQ support group", "grief support circle", "book club",
                   "parents' meetup", "choir rehearsal"],
         "day": ["Tuesday", "Thursday", "Sunday", "Wednesday"]},
        echo='Is the {group} still on {day}s? My friend might want to join.',
    ),
    Event(
        "We're moving to {city}! {partner} got transferred, so it's happening in {weeks} weeks.",
        "Wow, {city}? That's huge, how are you feeling?",
        "Finally settled in {city}. Our new place is near {landmark}, I walk there every morning.",
        [("single-hop", "Which city is {P} moving to?",
          "Where is {P} relocating?", "say"),
         ("single-hop", "Why is {P} moving to {city}?",
          "What is the reason behind {P}'s move?", "say"),
         ("multi-hop", "What is the new home near, in the city {P} moved to in {month}?",
          "After the move announced in {month}, what landmark does {P} live close to?", "both")],
        {"city": ["Leeds", "Denver", "Rotterdam", "Montreal", "Brisbane"],
         "partner": ["Sam", "My wife", "My husband", "Alex"], "weeks": ["six", "eight", "three"],
         "landmark": ["the botanical garden", "the old harbour", "a huge park", "the river"]},
        echo="I looked up {city} on a map, it's so far! Are the winters bad?",
    ),
    Event(
        "Finally bought a {instrument}! Taking lessons from a guy called {teacher}.",
        "Ooh, you'll have to play something for me!",
        "{teacher} says I'm ready to learn my first real piece on the {instrument}, {piece}.",
        [("single-hop", "What instrument did {P} start learning?",
          "Which instrument is {P} taking lessons on?", "say"),
         ("single-hop", "Who teaches {P} the {instrument}?",
          "What is the name of {P}'s music teacher?", "say"),
         ("multi-hop", "What piece is {P} learning on the instrument bought in {month}?",
          "{P} got an instrument in {month}; which song is {P} practising now?", "both")],
        {"instrument": ["cello", "ukulele", "saxophone", "keyboard"],
         "teacher": ["Dmitri", "Ines", "Haruto", "Callum"],
         "piece": ["the Bach prelude", "Clair de Lune", "Blue Bossa", "a Beatles song"]},
        echo='There was a street musician with a {instrument} downtown, so good.',
    ),
    Event(
        "My {relative} is visiting from {home} next weekend, I need to clean everything, lol.",
        "Haha good luck! Are you cooking for them?",
        "The visit went well! My {relative} taught me how to make {dish}.",
        [("single-hop", "Who visited {P} from {home}?",
          "Which family member came over from {home}?", "say"),
         ("multi-hop", "What dish did {P} learn from the relative who visited in {month}?",
          "The family visit in {month}: what recipe did {P} pick up?", "both"),
         ("temporal", "When did {P}'s {relative} visit?",
          "Around what date was {P}'s {relative} in town?", "say")],
        {"relative": ["grandma", "aunt", "older brother", "dad"],
         "home": ["Manila", "Porto", "Nairobi", "Kraków", "Lagos"],
         "dish": ["pierogi", "adobo", "jollof rice", "pastéis de nata"]},
        echo='Did your {relative} get home safe? Flights from {home} are always delayed.',
    ),
    Event(
        "Ugh, I {injury} while {activity}. Doctor says no exercise for {weeks} weeks.",
        "Oh no!! Please rest, don't be a hero.",
        "Physio cleared me! Back to {activity} slowly, the {injury_part} feels fine.",
        [("single-hop", "How did {P} get injured?",
          "What was {P} doing when the injury happened?", "say"),
         ("temporal", "When did {P} get hurt?",
          "What date did {P} mention the injury?", "say"),
         ("single-hop", "How long did the doctor tell {P} to avoid exercise?",
          "For how many weeks was {P} told not to work out?", "say")],
        {"injury": ["sprained my ankle", "pulled a muscle in my back", "broke my wrist"],
         "activity": ["bouldering", "playing five-a-side", "skateboarding", "hiking"],
         "weeks": ["two", "four", "six"], "injury_part": ["ankle", "back", "wrist"]},
        echo="How's the recovery going? I keep thinking about you {activity} again.",
    ),
]
# fmt: on


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text[0].upper() + text[1:]


def _hash_share(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def build(rng: random.Random) -> tuple[list[dict], ...]:
    """(knowledge chunks, questions, paraphrases, removed lines) of every conversation:
    questions worded alike with other evidence are removed (:func:`drop_ambiguous`)."""
    chunks: list[dict] = []
    questions: list[dict] = []
    paraphrases: list[dict] = []
    for conv, (a, b) in enumerate(PEOPLE[:CONVERSATIONS]):
        start = date(2023, 1, 8) + timedelta(days=rng.randrange(0, 60))
        dates = [start + timedelta(days=14 * s + rng.randrange(0, 5)) for s in range(SESSIONS)]
        # Both friends may live through the same kind of event (two pets, two trips):
        # the near-duplicates a real chat has.
        pairs = rng.sample([(e, p) for e in range(len(EVENTS)) for p in (0, 1)], EVENTS_PER_CHAT)
        plan: dict[int, list[tuple[str, str, str]]] = {s: [] for s in range(SESSIONS)}
        facts = []
        # The two friends' events of one kind never share a value (two different pets).
        drawn = {
            kind: {k: rng.sample(list(v), 2) for k, v in EVENTS[kind].slots.items()}
            for kind in range(len(EVENTS))
        }
        for n, (kind, who) in enumerate(pairs):
            event = EVENTS[kind]
            person, friend = (a, b) if who == 0 else (b, a)
            values = {k: v[who] for k, v in drawn[kind].items()}
            say_at = rng.randrange(0, SESSIONS - 3)
            follow_at = say_at + rng.randrange(2, 4)
            values |= {"P": person, "O": friend, "month": dates[say_at].strftime("%B")}
            tag = f"{conv}-{n}"
            plan[say_at] += [
                (person, _fill(event.say, values), f"{tag}:say"),
                (friend, _fill(event.react, values), ""),
            ]
            plan[follow_at].append((person, _fill(event.follow, values), f"{tag}:follow"))
            echo_at = rng.randrange(say_at + 1, SESSIONS)
            plan[echo_at].append((friend, _fill(event.echo, values), ""))
            facts.append((tag, event, values))
        source = f"chat/{a.lower()}-{b.lower()}"
        evidence: dict[str, str] = {}
        position = 0
        for s in range(SESSIONS):
            first, second = (a, b) if s % 2 == 0 else (b, a)
            turns = [(first, rng.choice(FILLER_OPEN), ""), (second, rng.choice(FILLER_REPLY), "")]
            for told in plan[s]:
                turns.append(told)
                for _ in range(rng.randrange(1, 4)):
                    last = turns[-1][0]
                    turns.append((b if last == a else a, rng.choice(FILLER_CHAT[:-6]), ""))
            turns.append((first, rng.choice(FILLER_CHAT[-6:]), ""))
            for speaker, text, mark in turns:
                chunks.append(
                    {
                        "source": source,
                        "position": position,
                        "text": f"[{dates[s].isoformat()}] {speaker}: {text}",
                        "metadata": {
                            "conversation": source,
                            "session": s + 1,
                            "date": dates[s].isoformat(),
                            "speaker": speaker,
                        },
                    }
                )
                if mark:
                    evidence[mark] = f"{source}#{position}"
                position += 1
        for tag, event, values in facts:
            for q, (qkind, question, paraphrase, which) in enumerate(event.questions):
                marks = ["say", "follow"] if which == "both" else [which]
                relevant = [evidence[f"{tag}:{m}"] for m in marks]
                qid = f"conv{tag}-q{q}"
                split = "heldout" if _hash_share(qid) < HELDOUT_SHARE else "train"
                questions.append(
                    {
                        "id": qid,
                        "query": _fill(question, values),
                        "relevant": relevant,
                        "split": split,
                        "metadata": {"kind": qkind, "conversation": source},
                    }
                )
                if split == "train":
                    paraphrases.append(
                        {
                            "id": f"{qid}~p1",
                            "query": _fill(paraphrase, values),
                            "relevant": relevant,
                            "metadata": {"paraphrase_of": qid, "kind": qkind},
                        }
                    )
    return (chunks, *drop_ambiguous(questions, paraphrases))


def write(folder: Path, seed: int = SEED) -> dict[str, int]:
    chunks, questions, paraphrases, removed = build(random.Random(seed))
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("knowledge.jsonl", chunks),
        ("queries.jsonl", questions),
        ("paraphrases.jsonl", paraphrases),
        ("removed.jsonl", removed),
    ):
        with (folder / name).open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = (len(chunks), len(questions), len(paraphrases), len(removed))
    return dict(zip(("turns", "questions", "paraphrases", "removed"), counts, strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m evals.conversation_corpus")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    print(write(args.folder, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
