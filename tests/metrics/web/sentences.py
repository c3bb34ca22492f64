"""Seven small originals with a human and a machine paraphrase and a reference each."""

ORIGINALS = [
    "The cat sat on the mat near the door.",
    "He went to the market to buy fresh bread.",
    "Rain fell all night over the quiet town.",
    "She wrote a long letter to her old friend.",
    "The children played in the garden until dusk.",
    "A small boat drifted slowly down the river.",
    "They opened the windows to let the air in.",
]
HUMAN = [
    "A cat was sitting on the mat by the door.",
    "He walked to the market and bought fresh bread.",
    "All night the rain came down on the silent town.",
    "She sent her old friend a lengthy letter.",
    "Until evening the kids played in the garden.",
    "Slowly a little boat floated along the river.",
    "They let air in by opening the windows.",
]
MACHINE = [
    "The cat sat on the mat near a door.",
    "He went to the market to buy new bread.",
    "Rain fell all night on the quiet town.",
    "She wrote a long letter to an old friend.",
    "The kids played in the garden until dusk.",
    "A small boat drifted down the river slowly.",
    "They opened windows to let the air in.",
]
REFERENCES = [
    "A cat sat on the mat close to the door.",
    "He went off to the market to get fresh bread.",
    "It rained all night over the calm town.",
    "She composed a long letter to an old friend.",
    "The kids were playing in the garden till dusk.",
    "A little boat drifted slowly down the river.",
    "They opened the windows to let in some air.",
]
