// Package revision makes and reads class revisions: immutable snapshots of what a class's
// resources run (its spec template, its module's files, the provider lock and the
// ProviderConfigs the template names), kept as ClassRevisions in the class's namespace.
// The revision controller makes them, the claim controller configures resources from
// their template, and the workspace renderer renders their module and serves their
// ProviderConfigs. It holds no reconciler.
package revision
