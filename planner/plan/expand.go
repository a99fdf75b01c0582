package plan

// KindExpand emits each input row once per projection of Node.Expand, in
// order (every projection has the node's schema). GROUPING SETS, ROLLUP
// and CUBE are one aggregation over an Expand that copies each row once
// per grouping set, with the keys outside the set NULL and the set's
// number as an extra key.
const KindExpand Kind = "expand"
