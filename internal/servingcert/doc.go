// Package servingcert keeps the TLS certificate an in-cluster HTTPS server (the
// controller's admission webhook) serves: a self-signed CA and a serving certificate it
// signs, kept in a Secret so that every replica serves the same one, and written to the
// files the server reads. The CA is what the API server is told to trust (caBundle).
package servingcert
