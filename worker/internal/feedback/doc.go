// Package feedback applies fact feedback and recall.
package feedback
