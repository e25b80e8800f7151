// Package classrevision keeps the revisions of every class of a Terraform kind: each time
// what a class's resources run changes (its spec template, its module's files, the
// module's provider lock) it makes a ClassRevision, and it reports in the class's status
// how many resources run each revision. The claim controller moves resources between
// revisions (controllers/claim: wantRevision).
package classrevision
