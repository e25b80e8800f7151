// Package backendproxy serves terraform's kubernetes state backend a loopback door to
// the API server, with the identity of the process that runs terraform, that reads a
// state by its name: the backend of terraform 1.11 finds a state with a LIST of the
// namespace's Secrets by labels, which the API server answers by going through every
// Secret of the namespace, and the proxy narrows each such LIST to the one Secret its
// labels name. While a run holds a state's lock, the proxy answers terraform's rereads of
// that state from what the lock wrote or the first read returned, and from terraform's
// own writes after (Hold).
package backendproxy
