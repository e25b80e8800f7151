// Package kinds registers every claim and managed kind Terraplane ships: adding a cloud
// service is one bundled module plus one registration here.
package kinds
