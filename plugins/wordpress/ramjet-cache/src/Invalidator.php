<?php
/**
 * Invalidator: turns WordPress changes into purges.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Listens to content and site changes and tells Purge exactly what to
 * purge: a post's tags on publish/update/trash/delete/status change,
 * its post's page on comment changes, a term's archives and mentions on
 * term edits, and the whole site (its site tag) on menu, widget,
 * customizer, theme, plugin and core changes.
 */
class Invalidator {

	/**
	 * Options whose change affects every page.
	 */
	const SITE_OPTIONS = array(
		'blogname',
		'blogdescription',
		'sidebars_widgets',
		'permalink_structure',
		'category_base',
		'tag_base',
		'show_on_front',
		'page_on_front',
		'page_for_posts',
		'posts_per_page',
		'posts_per_rss',
		'rss_use_excerpt',
		'date_format',
		'time_format',
		'start_of_week',
		'site_icon',
		'stylesheet',
		'template',
		'WPLANG',
	);

	/**
	 * Tag names.
	 *
	 * @var Tags
	 */
	private $tags;

	/**
	 * The request's purge collector.
	 *
	 * @var Purge
	 */
	private $purge;

	/**
	 * An invalidator feeding $purge.
	 *
	 * @param Tags  $tags  Tag names.
	 * @param Purge $purge Purge collector.
	 */
	public function __construct( Tags $tags, Purge $purge ) {
		$this->tags  = $tags;
		$this->purge = $purge;
	}

	/**
	 * Hooks into WordPress.
	 */
	public function register() {
		add_action( 'transition_post_status', array( $this, 'post_status_changed' ), 10, 3 );
		add_action( 'post_updated', array( $this, 'post_updated' ), 10, 3 );
		add_action( 'before_delete_post', array( $this, 'post_deleted' ) );
		add_action( 'set_object_terms', array( $this, 'object_terms_set' ), 10, 6 );
		add_action( 'transition_comment_status', array( $this, 'comment_status_changed' ), 10, 3 );
		add_action( 'comment_post', array( $this, 'comment_posted' ), 10, 2 );
		add_action( 'edit_comment', array( $this, 'comment_edited' ) );
		add_action( 'delete_comment', array( $this, 'comment_edited' ) );
		add_action( 'edited_term', array( $this, 'term_changed' ), 10, 3 );
		add_action( 'pre_delete_term', array( $this, 'term_deleted' ), 10, 2 );
		add_action( 'profile_update', array( $this, 'author_changed' ) );
		add_action( 'wp_update_nav_menu', array( $this, 'site_changed' ) );
		add_action( 'customize_save_after', array( $this, 'site_changed' ) );
		add_action( 'switch_theme', array( $this, 'site_changed' ) );
		add_action( 'activated_plugin', array( $this, 'site_changed' ) );
		add_action( 'deactivated_plugin', array( $this, 'site_changed' ) );
		add_action( 'upgrader_process_complete', array( $this, 'site_changed' ) );
		add_action( '_core_updated_successfully', array( $this, 'site_changed' ) );
		add_action( 'updated_option', array( $this, 'option_updated' ) );
	}

	/**
	 * A post changed status (this also runs on every save of a post).
	 * Purges when it is or was published: it appears, changes or disappears.
	 *
	 * @param string   $new_status New status.
	 * @param string   $old_status Old status.
	 * @param \WP_Post $post       Post.
	 */
	public function post_status_changed( $new_status, $old_status, $post ) {
		if ( 'publish' !== $new_status && 'publish' !== $old_status ) {
			return;
		}
		if ( 'nav_menu_item' === $post->post_type ) {
			$this->site_changed();
			return;
		}
		if ( $this->cached_type( $post->post_type ) ) {
			$this->purge->add_tags( $this->tags->for_post_change( $post ) );
		}
	}

	/**
	 * A post was updated: its old author, date and parent may differ from
	 * the new ones, whose archives post_status_changed() covers.
	 *
	 * @param int      $post_id Post id.
	 * @param \WP_Post $after   Post after the update.
	 * @param \WP_Post $before  Post before the update.
	 */
	public function post_updated( $post_id, $after, $before ) {
		if ( 'publish' !== $before->post_status || ! $this->cached_type( $before->post_type ) ) {
			return;
		}
		if ( $before->post_author !== $after->post_author || $before->post_date !== $after->post_date || $before->post_parent !== $after->post_parent ) {
			$this->purge->add_tags( $this->tags->for_post_change( $before ) );
		}
	}

	/**
	 * A post is about to be deleted for good.
	 *
	 * @param int $post_id Post id.
	 */
	public function post_deleted( $post_id ) {
		$post = get_post( $post_id );
		if ( $post && 'publish' === $post->post_status && $this->cached_type( $post->post_type ) ) {
			$this->purge->add_tags( $this->tags->for_post_change( $post ) );
		}
	}

	/**
	 * A published post's terms were set: the archives of terms it left
	 * must drop it, those it joined must list it.
	 *
	 * @param int    $object_id  Object id.
	 * @param array  $terms      Terms given.
	 * @param array  $tt_ids     New term taxonomy ids.
	 * @param string $taxonomy   Taxonomy.
	 * @param bool   $append     Whether terms were appended.
	 * @param array  $old_tt_ids Old term taxonomy ids.
	 */
	public function object_terms_set( $object_id, $terms, $tt_ids, $taxonomy, $append, $old_tt_ids ) {
		$post = get_post( $object_id );
		if ( ! $post || 'publish' !== $post->post_status || ! $this->cached_type( $post->post_type ) ) {
			return;
		}
		$changed = array_merge( array_diff( (array) $tt_ids, (array) $old_tt_ids ), array_diff( (array) $old_tt_ids, (array) $tt_ids ) );
		foreach ( $changed as $tt_id ) {
			$term = get_term_by( 'term_taxonomy_id', (int) $tt_id, $taxonomy );
			if ( $term ) {
				$this->purge->add_tags( array( $this->tags->tag( 'term', $term->term_id ) ) );
			}
		}
	}

	/**
	 * A comment changed status (approved, unapproved, spam, trash).
	 *
	 * @param string      $new_status New status.
	 * @param string      $old_status Old status.
	 * @param \WP_Comment $comment    Comment.
	 */
	public function comment_status_changed( $new_status, $old_status, $comment ) {
		if ( 'approved' === $new_status || 'approved' === $old_status ) {
			$this->purge->add_tags( $this->tags->for_comment_change( $comment ) );
		}
	}

	/**
	 * A comment was posted; approved ones show at once.
	 *
	 * @param int        $comment_id Comment id.
	 * @param int|string $approved   1, 0 or "spam".
	 */
	public function comment_posted( $comment_id, $approved ) {
		if ( 1 === (int) $approved && 'spam' !== $approved ) {
			$this->comment_edited( $comment_id );
		}
	}

	/**
	 * A comment was edited or deleted.
	 *
	 * @param int $comment_id Comment id.
	 */
	public function comment_edited( $comment_id ) {
		$comment = get_comment( $comment_id );
		if ( $comment && '1' === (string) $comment->comment_approved ) {
			$this->purge->add_tags( $this->tags->for_comment_change( $comment ) );
		}
	}

	/**
	 * A term was edited.
	 *
	 * @param int    $term_id  Term id.
	 * @param int    $tt_id    Term taxonomy id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function term_changed( $term_id, $tt_id, $taxonomy ) {
		$this->purge->add_tags( $this->tags->for_term_change( $term_id, $taxonomy ) );
	}

	/**
	 * A term is about to be deleted.
	 *
	 * @param int    $term_id  Term id.
	 * @param string $taxonomy Taxonomy.
	 */
	public function term_deleted( $term_id, $taxonomy ) {
		$this->purge->add_tags( $this->tags->for_term_change( $term_id, $taxonomy ) );
	}

	/**
	 * A user's profile changed: pages showing their name.
	 *
	 * @param int $user_id User id.
	 */
	public function author_changed( $user_id ) {
		$this->purge->add_tags( $this->tags->for_author_change( $user_id ) );
	}

	/**
	 * An option changed; some affect every page.
	 *
	 * @param string $option Option name.
	 */
	public function option_updated( $option ) {
		if ( in_array( $option, self::SITE_OPTIONS, true ) || 0 === strpos( $option, 'widget_' ) || 0 === strpos( $option, 'theme_mods_' ) ) {
			$this->site_changed();
		}
	}

	/**
	 * Something every page shows changed: purge the site tag.
	 */
	public function site_changed() {
		$this->purge->add_tags( array( $this->tags->site() ) );
	}

	/**
	 * Whether pages of a post type can be cached (viewable, not a revision).
	 *
	 * @param string $type Post type.
	 * @return bool
	 */
	private function cached_type( $type ) {
		return 'revision' !== $type && is_post_type_viewable( $type );
	}
}
