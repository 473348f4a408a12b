import SeedApps

SeedMain.run(JokesApp(), summary: "a live jokes feed with votes (Hearth's seed tutorials 000 and 001)")
