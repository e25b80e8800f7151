// Package planstore keeps a managed resource's plans in the cluster: the saved plan that
// waits for approval, cut into Secret chunks and checked on read, and the readable text of
// its latest plan in a Plan object that reviewers may read without access to Secrets.
package planstore
