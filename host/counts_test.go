package host

// fullCounts: the tag's full counts (see integration) are played in a run
// with the tag and without the race detector. What they add is more of
// the same: messages the host handles one after another, through code the
// everyday counts take it through too. The race detector, which CI also
// runs with the tag, would make them ten times as costly and find nothing
// new in them; under it the everyday counts are played.
const fullCounts = integration && !raceEnabled
