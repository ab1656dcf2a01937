<?php
/**
 * Tags: the cache-tag vocabulary, what a page shows, and what a change touches.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Names cache tags and derives them from WordPress objects.
 *
 * Every tag starts with the site tag ("rj" + 3 hex digits of the install
 * path + "_" + blog id, e.g. "rj2c4_1"), so installs and the blogs of a
 * network sharing one ramjet never purge each other. Every cached page
 * carries the site tag itself, so purging it empties this blog only.
 *
 * Two tags per term and per author: "term.5" marks pages that list the
 * term's posts (purged when one of them changes), "termref.5" marks pages
 * that merely show the term's name (purged only when the term itself is
 * edited). Otherwise editing one post would purge every post sharing its
 * category.
 */
class Tags {

	/**
	 * The site tag, also the prefix of every other tag.
	 *
	 * @var string
	 */
	private $site;

	/**
	 * Tags for the site given by $site (see site_for()).
	 *
	 * @param string $site Site tag.
	 */
	public function __construct( $site ) {
		$this->site = $site;
	}

	/**
	 * The site tag for an install path and blog.
	 *
	 * @param string $abspath WordPress's ABSPATH.
	 * @param int    $blog_id Blog id (1 on a single site).
	 * @return string
	 */
	public static function site_for( $abspath, $blog_id ) {
		return 'rj' . substr( md5( $abspath ), -3 ) . '_' . (int) $blog_id;
	}

	/**
	 * The site tag: every page of this blog.
	 *
	 * @return string
	 */
	public function site() {
		return $this->site;
	}

	/**
	 * A named tag of this site.
	 *
	 * @param string     $kind Tag kind: post, term, termref, author, authorref, type, date, home, front, feed, comments, search, 404, rest, esi, url.
	 * @param string|int $id   Optional object id or name.
	 * @return string
	 */
	public function tag( $kind, $id = '' ) {
		$tag = $this->site . '.' . $kind;
		if ( '' !== $id && null !== $id ) {
			$tag .= '.' . preg_replace( '/[^A-Za-z0-9_.-]/', '_', (string) $id );
		}
		return $tag;
	}

	/**
	 * Tags to purge when a post changes: its page, the archives that list
	 * it (terms and their ancestors, author, post type, date), home, front,
	 * feeds, and the adjacent posts whose pages link to it by title.
	 *
	 * @param \WP_Post $post The post.
	 * @return string[]
	 */
	public function for_post_change( $post ) {
		$tags = array(
			$this->tag( 'post', $post->ID ),
			$this->tag( 'type', $post->post_type ),
			$this->tag( 'home' ),
			$this->tag( 'front' ),
			$this->tag( 'feed' ),
			$this->tag( 'author', $post->post_author ),
		);
		$time = strtotime( (string) $post->post_date );
		if ( $time ) {
			$tags[] = $this->tag( 'date', gmdate( 'Y', $time ) );
			$tags[] = $this->tag( 'date', gmdate( 'Ym', $time ) );
			$tags[] = $this->tag( 'date', gmdate( 'Ymd', $time ) );
		}
		foreach ( $this->terms_of( $post ) as $term ) {
			$tags = array_merge( $tags, $this->term_archives( $term->term_id, $term->taxonomy ) );
		}
		foreach ( $this->adjacent_ids( $post ) as $id ) {
			$tags[] = $this->tag( 'post', $id );
		}
		if ( 'page' === $post->post_type && $post->post_parent ) {
			$tags[] = $this->tag( 'post', $post->post_parent );
		}
		return array_values( array_unique( $tags ) );
	}

	/**
	 * Tags to purge when a term is edited or deleted: its archive and its
	 * ancestors' archives, and every page that shows its name.
	 *
	 * @param int    $term_id  Term id.
	 * @param string $taxonomy Taxonomy name.
	 * @return string[]
	 */
	public function for_term_change( $term_id, $taxonomy ) {
		$tags   = $this->term_archives( $term_id, $taxonomy );
		$tags[] = $this->tag( 'termref', $term_id );
		return array_values( array_unique( $tags ) );
	}

	/**
	 * Tags to purge when a comment changes: the post's page and the comment feeds.
	 *
	 * @param object $comment Comment with comment_post_ID.
	 * @return string[]
	 */
	public function for_comment_change( $comment ) {
		return array( $this->tag( 'post', (int) $comment->comment_post_ID ), $this->tag( 'comments' ) );
	}

	/**
	 * Tags to purge when a user's profile changes: their archive and every
	 * page showing their name.
	 *
	 * @param int $user_id User id.
	 * @return string[]
	 */
	public function for_author_change( $user_id ) {
		return array( $this->tag( 'author', $user_id ), $this->tag( 'authorref', $user_id ) );
	}

	/**
	 * Tags of the current front-end page, from WordPress's main query and
	 * the posts rendered on it.
	 *
	 * @param int[] $shown_ids Posts rendered on the page (the_post), besides the main query's.
	 * @return string[]
	 */
	public function for_page( $shown_ids = array() ) {
		$tags = array( $this->site );
		if ( is_front_page() ) {
			$tags[] = $this->tag( 'front' );
		}
		if ( is_home() ) {
			$tags[] = $this->tag( 'home' );
		}
		if ( is_feed() ) {
			$tags[] = $this->tag( 'feed' );
			if ( is_comment_feed() ) {
				$tags[] = $this->tag( 'comments' );
			}
		}
		if ( is_search() ) {
			$tags[] = $this->tag( 'search' );
		}
		if ( is_404() ) {
			$tags[] = $this->tag( '404' );
		}
		$tags = array_merge( $tags, $this->archive_tags() );
		$ids  = $shown_ids;
		if ( is_singular() ) {
			$ids[] = (int) get_queried_object_id();
		}
		foreach ( $this->main_query_ids() as $id ) {
			$ids[] = $id;
		}
		foreach ( array_unique( array_map( 'intval', $ids ) ) as $id ) {
			if ( $id > 0 ) {
				$tags = array_merge( $tags, $this->shown_post( $id ) );
			}
		}
		return array_values( array_unique( $tags ) );
	}

	/**
	 * Tags of a REST response listing or showing posts.
	 *
	 * @param int[] $post_ids Posts in the response.
	 * @return string[]
	 */
	public function for_rest( $post_ids ) {
		$tags = array( $this->site, $this->tag( 'rest' ) );
		foreach ( $post_ids as $id ) {
			$tags[] = $this->tag( 'post', (int) $id );
		}
		return array_values( array_unique( $tags ) );
	}

	/**
	 * Tags for the archive the main query shows (term, author, post type, date).
	 *
	 * @return string[]
	 */
	private function archive_tags() {
		$tags = array();
		if ( is_category() || is_tag() || is_tax() ) {
			$tags[] = $this->tag( 'term', (int) get_queried_object_id() );
		}
		if ( is_author() ) {
			$tags[] = $this->tag( 'author', (int) get_queried_object_id() );
		}
		if ( is_post_type_archive() ) {
			foreach ( (array) get_query_var( 'post_type' ) as $type ) {
				$tags[] = $this->tag( 'type', $type );
			}
		}
		if ( is_date() ) {
			$date = sprintf( '%04d', (int) get_query_var( 'year' ) );
			if ( get_query_var( 'monthnum' ) ) {
				$date .= sprintf( '%02d', (int) get_query_var( 'monthnum' ) );
				if ( get_query_var( 'day' ) ) {
					$date .= sprintf( '%02d', (int) get_query_var( 'day' ) );
				}
			}
			$tags[] = $this->tag( 'date', $date );
		}
		return $tags;
	}

	/**
	 * Tags for one post shown on a page: the post, and the names of its
	 * terms and author.
	 *
	 * @param int $id Post id.
	 * @return string[]
	 */
	private function shown_post( $id ) {
		$tags = array( $this->tag( 'post', $id ) );
		$post = get_post( $id );
		if ( ! $post ) {
			return $tags;
		}
		$tags[] = $this->tag( 'authorref', $post->post_author );
		foreach ( $this->terms_of( $post ) as $term ) {
			$tags[] = $this->tag( 'termref', $term->term_id );
		}
		return $tags;
	}

	/**
	 * Ids of the posts in the main query.
	 *
	 * @return int[]
	 */
	private function main_query_ids() {
		$query = isset( $GLOBALS['wp_query'] ) ? $GLOBALS['wp_query'] : null;
		$ids   = array();
		foreach ( ( $query && is_array( $query->posts ) ) ? $query->posts : array() as $post ) {
			$ids[] = is_object( $post ) ? (int) $post->ID : (int) $post;
		}
		return $ids;
	}

	/**
	 * A term's archive tag and its ancestors'.
	 *
	 * @param int    $term_id  Term id.
	 * @param string $taxonomy Taxonomy.
	 * @return string[]
	 */
	private function term_archives( $term_id, $taxonomy ) {
		$tags = array( $this->tag( 'term', $term_id ) );
		foreach ( (array) get_ancestors( $term_id, $taxonomy, 'taxonomy' ) as $ancestor ) {
			$tags[] = $this->tag( 'term', $ancestor );
		}
		return $tags;
	}

	/**
	 * Terms of a post in its public taxonomies.
	 *
	 * @param \WP_Post $post Post.
	 * @return object[] Terms with term_id and taxonomy.
	 */
	private function terms_of( $post ) {
		$terms = array();
		foreach ( get_object_taxonomies( $post->post_type, 'objects' ) as $taxonomy ) {
			if ( empty( $taxonomy->public ) ) {
				continue;
			}
			$found = get_the_terms( $post->ID, $taxonomy->name );
			if ( is_array( $found ) ) {
				$terms = array_merge( $terms, $found );
			}
		}
		return $terms;
	}

	/**
	 * The published posts just before and after $post in date order, whose
	 * pages link to it.
	 *
	 * @param \WP_Post $post Post.
	 * @return int[]
	 */
	private function adjacent_ids( $post ) {
		if ( 'page' === $post->post_type ) {
			return array();
		}
		$ids = array();
		foreach ( array( 'before' => 'DESC', 'after' => 'ASC' ) as $side => $order ) {
			$found = get_posts(
				array(
					'post_type'        => $post->post_type,
					'post_status'      => 'publish',
					'numberposts'      => 1,
					'fields'           => 'ids',
					'orderby'          => 'date',
					'order'            => $order,
					'post__not_in'     => array( $post->ID ),
					'date_query'       => array(
						array(
							$side       => $post->post_date,
							'inclusive' => true,
						),
					),
					'suppress_filters' => true,
				)
			);
			$ids = array_merge( $ids, array_map( 'intval', (array) $found ) );
		}
		return $ids;
	}
}

